import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectNatsBus, createMemoryBroker, DEFAULT_JETSTREAM_POLICY, type Bus } from '@hopline/bus';
import { connect, nanos } from 'nats';
import { codecs, RemoteError, subjects } from '@hopline/contracts';
import {
  EmbeddedLexicalBackend,
  EmbeddedVectorBackend,
  HashingEmbedder,
  type LexicalBackend,
  type VectorBackend,
} from '@hopline/retrieval';
import { createLogger, createMetrics } from '@hopline/telemetry';
import { startNats, waitFor } from '@hopline/test-support';
import type { SearchesInProcess } from '../src/backends.js';
import { configSchema } from '../src/config.js';
import { startRetrievalWorker, type RetrievalWorker } from '../src/worker.js';

const nats = await startNats();
const logger = createLogger('retrieval-worker-test', { level: 'silent' });

/**
 * Holds indexing until the test opens its gate: the indexer reads a document's state before it
 * writes anything, so holding that read holds the whole command, and searches are untouched.
 */
class IndexingGate {
  held: Promise<void> = Promise.resolve();
  around(inner: LexicalBackend): LexicalBackend {
    return {
      name: inner.name,
      upsertDocument: (doc, items, signal) => inner.upsertDocument(doc, items, signal),
      deleteDocument: (ref, signal) => inner.deleteDocument(ref, signal),
      writeDocuments: (writes, signal) => inner.writeDocuments(writes, signal),
      documentState: async (key, signal) => {
        await this.held;
        return inner.documentState(key, signal);
      },
      countChunks: (signal) => inner.countChunks(signal),
      close: () => inner.close(),
      search: (request, signal) => inner.search(request, signal),
    };
  }
}

function gate(): { opened: Promise<void>; open: () => void } {
  let open = () => {};
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/** A worker started but not awaited: it may still be catching up with the stream. */
async function startWorker(
  bus: Bus,
  env: Record<string, string>,
  indexingGate = new IndexingGate(),
): Promise<RetrievalWorker> {
  const embedder = new HashingEmbedder();
  const [lexical, vector] = await Promise.all([
    EmbeddedLexicalBackend.open(),
    EmbeddedVectorBackend.open({ dimensions: embedder.dimensions }),
  ]);
  return startRetrievalWorker({
    config: configSchema.parse(env),
    bus,
    lexical: indexingGate.around(lexical),
    vector,
    embedder,
    indexesShared: false,
    embeddedIndexes: { lexical: true, vector: true },
    logger,
    metrics: createMetrics('test', { defaultMetrics: false }),
  });
}

async function worker(
  bus: Bus,
  workerId: string,
  env: Record<string, string> = {},
  searchesInProcess?: SearchesInProcess,
): Promise<RetrievalWorker> {
  const embedder = new HashingEmbedder();
  const [lexical, vector] = await Promise.all([
    EmbeddedLexicalBackend.open(),
    EmbeddedVectorBackend.open({ dimensions: embedder.dimensions }),
  ]);
  const config = configSchema.parse({ WORKER_ID: workerId, ...env });
  const started = await startRetrievalWorker({
    config,
    bus,
    lexical,
    vector,
    embedder,
    indexesShared: false,
    embeddedIndexes: { lexical: true, vector: true },
    ...(searchesInProcess ? { searchesInProcess } : {}),
    logger,
    metrics: createMetrics('test', { defaultMetrics: false }),
  });
  await started.ready;
  return started;
}

const deadline = () => Date.now() + 5_000;
const retrieve = (bus: Bus, tenantId: string, kbIds: string[], query: string, docIds: string[] = []) =>
  bus
    .request(
      subjects.retrieve,
      codecs.retrieveRequest.encode({
        ctx: { questionId: 'q1', scope: { tenantId, userId: 'u', kbIds, docIds }, deadlineUnixMs: deadline() },
        query,
        topK: 5,
        hop: 1,
      }),
      { timeoutMs: 5_000 },
    )
    .then((reply) => codecs.retrieveResponse.decode(reply.data));

async function ingest(bus: Bus, tenantId: string, kbId: string, docId: string, text: string, version = 1) {
  const stream = await bus.durableStream();
  await stream.publish(
    subjects.ingest(tenantId, kbId),
    codecs.ingestCommand.encode({ upsert: { tenantId, kbId, docId, version, title: docId, text } }),
    { msgId: `${docId}:${version}` },
  );
}

const chunkCount = (w: RetrievalWorker, tenantId: string, kbId: string) => w.indexedChunks(tenantId, kbId);

interface Indexes {
  lexical: LexicalBackend;
  vector: VectorBackend;
  /** Documents written to the lexical index since these indexes were opened. */
  readonly written: number;
}

/** New, empty indexes: a first start, or one after the index files were removed. */
async function emptyIndexes(): Promise<Indexes> {
  const embedder = new HashingEmbedder();
  const [lexical, vector] = await Promise.all([
    EmbeddedLexicalBackend.open(),
    EmbeddedVectorBackend.open({ dimensions: embedder.dimensions }),
  ]);
  const indexes = {
    written: 0,
    lexical: {
      ...new IndexingGate().around(lexical),
      writeDocuments: (writes: Parameters<LexicalBackend['writeDocuments']>[0]) => {
        indexes.written += writes.length;
        return lexical.writeDocuments(writes);
      },
    },
    vector,
  };
  return indexes;
}

/**
 * A worker started on these indexes, once it serves. `shared`: they stand for Elasticsearch and
 * Milvus, which every worker shares and which keep their documents outside DATA_DIR.
 */
async function startOn(bus: Bus, workerId: string, indexes: Indexes, shared = false): Promise<RetrievalWorker> {
  const started = await startRetrievalWorker({
    config: configSchema.parse({ WORKER_ID: workerId }),
    bus,
    lexical: indexes.lexical,
    vector: indexes.vector,
    embedder: new HashingEmbedder(),
    indexesShared: shared,
    embeddedIndexes: { lexical: !shared, vector: !shared },
    logger,
    metrics: createMetrics('test', { defaultMetrics: false }),
  });
  await started.ready;
  return started;
}

/**
 * A worker's embedded indexes are emptied between two starts (their files removed, as a change
 * of embedder asks) while its own durable consumer, which the server keeps, had read the whole
 * stream: restarted, the worker must read the stream from its start again before it serves, and
 * a later start on the indexes it filled resumes where its consumer stands.
 */
async function restartOnEmptiedIndexes(bus: Bus, workerId: string, tenantId: string): Promise<void> {
  // Document ids of their own: the stream would drop a message id another test published.
  await ingest(bus, tenantId, 'kb', 'atlas-owner', 'Project Atlas is owned by Mira Chen.');
  await ingest(bus, tenantId, 'kb', 'mira-team', 'Mira Chen belongs to the Platform Engineering department.');
  const first = await startOn(bus, workerId, await emptyIndexes());
  const indexed = await chunkCount(first, tenantId, 'kb');
  expect(indexed).toBeGreaterThanOrEqual(2);
  await first.stop();

  const emptied = await emptyIndexes();
  const restarted = await startOn(bus, workerId, emptied);
  expect(await chunkCount(restarted, tenantId, 'kb')).toBe(indexed);
  expect((await retrieve(bus, tenantId, ['kb'], 'Who owns Project Atlas?')).chunks[0]?.docId).toBe('atlas-owner');
  await restarted.stop();

  const written = emptied.written;
  const again = await startOn(bus, workerId, emptied);
  expect(await chunkCount(again, tenantId, 'kb')).toBe(indexed);
  expect(emptied.written).toBe(written);
  await again.stop();
}

describe.skipIf(!nats.url)('retrieval-worker over NATS', () => {
  const buses: Bus[] = [];
  const workers: RetrievalWorker[] = [];
  let client: Bus;

  beforeAll(async () => {
    client = await connectNatsBus({ url: nats.url as string, name: 'test-client' });
    for (const id of ['worker-a', 'worker-b']) {
      const bus = await connectNatsBus({ url: nats.url as string, name: id });
      buses.push(bus);
      workers.push(await worker(bus, id));
    }
    await ingest(client, 'acme', 'docs', 'atlas', 'Project Atlas is owned by Mira Chen.');
    await ingest(client, 'acme', 'docs', 'mira', 'Mira Chen belongs to the Platform Engineering department.');
    await ingest(client, 'globex', 'docs', 'secret', 'Project Atlas at Globex is owned by a secret team.');
    // Embedded indexes belong to one worker: each reads the whole stream through its own consumer.
    await waitFor(
      async () => {
        const counts = await Promise.all(
          workers.flatMap((w) => [chunkCount(w, 'acme', 'docs'), chunkCount(w, 'globex', 'docs')]),
        );
        return counts.every((count) => count > 0);
      },
      { timeoutMs: 15_000, description: 'both workers to index every document' },
    );
  }, 30_000);

  afterAll(async () => {
    for (const w of workers) await w.stop();
    for (const bus of [...buses, client]) await bus?.drain();
    await nats[Symbol.asyncDispose]();
  });

  it('retrieval - two workers in the queue group share the requests', async () => {
    const answeredBy = new Map<string, number>();
    for (let i = 0; i < 40; i++) {
      const response = await retrieve(client, 'acme', ['docs'], 'Who owns Project Atlas?');
      expect(response.chunks[0]?.docId).toBe('atlas');
      answeredBy.set(response.workerId, (answeredBy.get(response.workerId) ?? 0) + 1);
    }
    expect([...answeredBy.keys()].sort()).toEqual(['worker-a', 'worker-b']);
    for (const count of answeredBy.values()) expect(count).toBeGreaterThanOrEqual(5);
  });

  it("retrieval - scope filter hides other tenants' chunks, whatever the query says", async () => {
    const response = await retrieve(client, 'acme', ['docs'], 'Globex secret team Project Atlas');
    expect(response.chunks.length).toBeGreaterThan(0);
    expect(response.chunks.every((chunk) => chunk.tenantId === 'acme')).toBe(true);
    const other = await retrieve(client, 'globex', ['docs'], 'Mira Chen Platform Engineering');
    expect(other.chunks.every((chunk) => chunk.tenantId === 'globex')).toBe(true);
  });

  it("retrieval - selected documents narrow the search; another tenant's document id matches nothing", async () => {
    const query = 'Who owns Project Atlas and which department is Mira Chen in?';
    const selected = await retrieve(client, 'acme', ['docs'], query, ['mira']);
    expect(selected.chunks.length).toBeGreaterThan(0);
    expect(selected.chunks.every((chunk) => chunk.docId === 'mira')).toBe(true);
    const theirs = await retrieve(client, 'acme', ['docs'], 'Globex secret team Project Atlas', ['secret']);
    expect(theirs.chunks).toEqual([]);
  });

  it('kb stats - documents and chunks of the named kbs of one tenant, zeros for a kb the index never saw', async () => {
    const reply = await client.request(
      subjects.kbStats,
      codecs.kbStatsRequest.encode({ tenantId: 'acme', kbIds: ['docs', 'empty'], afterSeq: 0 }),
      { timeoutMs: 5_000 },
    );
    const stats = codecs.kbStatsResponse.decode(reply.data);
    expect(stats.kbs).toEqual([
      { kbId: 'docs', documents: 2, chunks: expect.any(Number) },
      { kbId: 'empty', documents: 0, chunks: 0 },
    ]);
    expect(stats.kbs[0]?.chunks).toBeGreaterThanOrEqual(2);
    expect(['worker-a', 'worker-b']).toContain(stats.workerId);
  });

  it('retrieval - a request without a verified scope is refused with a validation error', async () => {
    const bad = codecs.retrieveRequest.encode({
      ctx: { questionId: 'q1', scope: { tenantId: '', kbIds: [] }, deadlineUnixMs: deadline() },
      query: 'x',
      topK: 5,
      hop: 1,
    });
    const failure = await client.request(subjects.retrieve, bad, { timeoutMs: 5_000 }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(RemoteError);
    expect((failure as RemoteError).code).toBe('invalid_argument');
  });

  it('ingestion - a malformed command is dead-lettered with the reason, not retried forever', async () => {
    const stream = await client.durableStream();
    const deadLetters = await client.durableStream({
      name: 'HOPLINE_DEADLETTER',
      subjects: [subjects.deadLetter],
      retention: 'dead-letters',
    });
    const seen: string[] = [];
    const consumer = await deadLetters.consume(
      { durable: 'test-dead-letters', filterSubject: subjects.deadLetter, maxDeliver: 1, ackWaitMs: 5_000 },
      async (message) => {
        seen.push(codecs.deadLetter.decode(message.data).reason);
        return { kind: 'ack' };
      },
    );
    await stream.publish(subjects.ingest('acme', 'docs'), Uint8Array.from([0xff, 0xff, 0xff]), { msgId: 'garbage:1' });
    await waitFor(() => seen.length >= 1, {
      timeoutMs: 10_000,
      description: 'the malformed command to be dead-lettered',
    });
    expect(seen[0]).toMatch(/malformed/);
    // Both workers reject it, but the dead letter carries the command's message id: one record.
    expect(seen).toHaveLength(1);
    await consumer.stop();
  });

  it('retention - the dead letters a worker keeps are bounded by age and size, the ingest stream is kept whole', async () => {
    const nc = await connect({ servers: nats.url as string });
    try {
      const jsm = await nc.jetstreamManager();
      const { limits } = DEFAULT_JETSTREAM_POLICY;
      expect((await jsm.streams.info('HOPLINE_DEADLETTER')).config).toMatchObject({
        max_age: nanos(limits['dead-letters'].maxAgeMs),
        max_bytes: limits['dead-letters'].maxBytes,
      });
      expect((await jsm.streams.info('HOPLINE_INGEST')).config).toMatchObject({ max_age: 0, max_bytes: -1 });
    } finally {
      await nc.close();
    }
  });

  it('identity - two workers on one host without WORKER_ID each make and keep an identity of their own, so both index the whole stream', async () => {
    const dirs = [mkdtempSync(join(tmpdir(), 'worker-a-')), mkdtempSync(join(tmpdir(), 'worker-b-'))];
    const buses: Bus[] = [];
    const workers: RetrievalWorker[] = [];
    try {
      for (const dir of dirs) {
        const bus = await connectNatsBus({ url: nats.url as string, name: 'identity-test' });
        buses.push(bus);
        workers.push(await startWorker(bus, { DATA_DIR: dir }));
      }
      const [first, second] = workers as [RetrievalWorker, RetrievalWorker];
      expect(first.workerId).not.toBe(second.workerId);
      const tenant = `identity-${first.workerId.slice(-8)}`;
      for (let i = 0; i < 10; i += 1)
        await ingest(buses[0] as Bus, tenant, 'docs', `doc-${i}`, `Document number ${i}.`);
      await waitFor(
        async () =>
          (await Promise.all(workers.map((w) => chunkCount(w, tenant, 'docs')))).every((count) => count === 10),
        { timeoutMs: 15_000, description: 'both workers to index all ten documents' },
      );
      await first.stop();
      const again = await startWorker(buses[0] as Bus, { DATA_DIR: dirs[0] as string });
      expect(again.workerId).toBe(first.workerId);
      workers[0] = again;
    } finally {
      for (const w of workers) await w.stop();
      for (const bus of buses) await bus.drain();
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    }
  });

  it('restart - a worker whose embedded indexes hold nothing reads the stream from its start, though its consumer had read it all', async () => {
    const bus = await connectNatsBus({ url: nats.url as string, name: 'restart-test' });
    try {
      await restartOnEmptiedIndexes(bus, 'emptied', 'emptied');
    } finally {
      await bus.drain();
    }
  });
});

describe('retrieval-worker on the in-memory bus', () => {
  it('ingestion - INGEST_BATCH_SIZE bounds how many commands the worker applies as one batch', async () => {
    const broker = createMemoryBroker();
    const bus = broker.connect();
    for (let i = 0; i < 10; i++) await ingest(bus, 'acme', 'kb', `doc${i}`, `Document number ${i}.`);
    const embedder = new HashingEmbedder();
    const [lexical, vector] = await Promise.all([
      EmbeddedLexicalBackend.open(),
      EmbeddedVectorBackend.open({ dimensions: embedder.dimensions }),
    ]);
    const batches: number[] = [];
    const w = await startRetrievalWorker({
      config: configSchema.parse({ WORKER_ID: 'batched', INGEST_BATCH_SIZE: '3' }),
      bus,
      lexical: {
        ...new IndexingGate().around(lexical),
        writeDocuments: (writes) => {
          batches.push(writes.length);
          return lexical.writeDocuments(writes);
        },
      },
      vector,
      embedder,
      indexesShared: false,
      embeddedIndexes: { lexical: true, vector: true },
      logger,
      metrics: createMetrics('test', { defaultMetrics: false }),
    });
    await w.ready;
    expect(batches.reduce((sum, size) => sum + size, 0)).toBe(10);
    expect(Math.max(...batches)).toBe(3);
    await w.stop();
    await bus.drain();
  });

  it('ingestion - redelivering the same document version does not duplicate its chunks', async () => {
    const broker = createMemoryBroker();
    const bus = broker.connect();
    const w = await worker(bus, 'solo');
    await ingest(bus, 'acme', 'kb', 'doc', 'Alpha beta gamma.', 1);
    await waitFor(async () => (await chunkCount(w, 'acme', 'kb')) > 0, { timeoutMs: 5_000 });
    const before = await chunkCount(w, 'acme', 'kb');
    const stream = await bus.durableStream();
    // A new message id with the same doc version: the indexer, not the stream, must dedupe it.
    await stream.publish(
      subjects.ingest('acme', 'kb'),
      codecs.ingestCommand.encode({
        upsert: { tenantId: 'acme', kbId: 'kb', docId: 'doc', version: 1, title: 'doc', text: 'Alpha beta gamma.' },
      }),
      { msgId: 'doc:1:again' },
    );
    await ingest(bus, 'acme', 'kb', 'marker', 'Delta.', 1);
    await waitFor(async () => (await retrieve(bus, 'acme', ['kb'], 'Delta')).chunks.some((c) => c.docId === 'marker'), {
      timeoutMs: 5_000,
    });
    expect(await chunkCount(w, 'acme', 'kb')).toBe(before + 1);
    await w.stop();
    await bus.drain();
  });

  it('retrieval - fusion follows the embedder unless FUSION_METHOD and RRF_WEIGHT_VECTOR say otherwise', async () => {
    const topScore = async (env: Record<string, string>) => {
      const bus = createMemoryBroker().connect();
      const w = await worker(bus, 'fusion', env);
      try {
        await ingest(bus, 'acme', 'kb', 'doc', 'Alpha beta gamma.', 1);
        await waitFor(async () => (await chunkCount(w, 'acme', 'kb')) > 0, { timeoutMs: 5_000 });
        const [top] = (await retrieve(bus, 'acme', ['kb'], 'alpha beta')).chunks;
        expect(top?.foundBy).toBe('HYBRID');
        return top?.scores?.rrf;
      } finally {
        await w.stop();
        await bus.drain();
      }
    };
    // The hashing embedder declares relative-score at 0.1: first on both paths is 1 + 0.1.
    expect(await topScore({})).toBeCloseTo(1.1, 10);
    expect(await topScore({ RRF_WEIGHT_VECTOR: '0.5' })).toBeCloseTo(1.5, 10);
    expect(await topScore({ FUSION_METHOD: 'rrf', RRF_WEIGHT_VECTOR: '1' })).toBeCloseTo(2 / 61, 10);
  });
});

describe('retrieval-worker restarted', () => {
  it('restart - a worker whose embedded indexes hold nothing reads the stream from its start, though its consumer had read it all', async () => {
    const bus = createMemoryBroker().connect();
    try {
      await restartOnEmptiedIndexes(bus, 'emptied', 'acme');
    } finally {
      await bus.drain();
    }
  });

  it('restart - the consumer of workers whose indexes are shared is never reset: a start on indexes that hold nothing resumes where it stands', async () => {
    const bus = createMemoryBroker().connect();
    try {
      await ingest(bus, 'acme', 'kb', 'atlas', 'Project Atlas is owned by Mira Chen.');
      const first = await startOn(bus, 'remote', await emptyIndexes(), true);
      expect(await chunkCount(first, 'acme', 'kb')).toBeGreaterThan(0);
      await first.stop();
      // Every worker reads through this consumer, and shared indexes live on outside DATA_DIR.
      const emptied = await emptyIndexes();
      const restarted = await startOn(bus, 'remote', emptied, true);
      expect(emptied.written).toBe(0);
      await restarted.stop();
    } finally {
      await bus.drain();
    }
  });
});

describe('retrieval-worker readiness', () => {
  it.each([
    { searchesInProcess: { lexical: true, vector: true }, warmed: true },
    { searchesInProcess: { lexical: false, vector: true }, warmed: false },
  ])(
    'warm-up - before it starts, a worker whose searches all run in process searches in both scripts (not a remote store: $searchesInProcess)',
    async ({ searchesInProcess, warmed }) => {
      const bus = createMemoryBroker().connect();
      const embedder = new HashingEmbedder();
      const [lexical, vector] = await Promise.all([
        EmbeddedLexicalBackend.open(),
        EmbeddedVectorBackend.open({ dimensions: embedder.dimensions }),
      ]);
      const searched: string[] = [];
      const w = await startRetrievalWorker({
        config: configSchema.parse({ WORKER_ID: 'warm' }),
        bus,
        lexical: {
          ...new IndexingGate().around(lexical),
          search: (request, signal) => {
            searched.push(request.query);
            return lexical.search(request, signal);
          },
        },
        vector,
        embedder,
        indexesShared: false,
        embeddedIndexes: { lexical: true, vector: true },
        searchesInProcess,
        logger,
        metrics: createMetrics('test', { defaultMetrics: false }),
      });
      try {
        const searchedBeforeReady = [...searched];
        expect(searchedBeforeReady.some((query) => /[a-z]/i.test(query))).toBe(warmed);
        expect(searchedBeforeReady.some((query) => /[\u4e00-\u9fff]/.test(query))).toBe(warmed);
        await w.ready;
      } finally {
        await w.stop();
        await bus.drain();
      }
    },
  );

  it('readiness - a worker serves retrievals only once its index caught up with the stream; until then /healthz is not ok and reports the lag', async () => {
    const bus = createMemoryBroker().connect();
    await ingest(bus, 'acme', 'kb', 'doc', 'Alpha beta gamma.', 1);
    const indexingGate = new IndexingGate();
    const indexing = gate();
    indexingGate.held = indexing.opened;
    const w = await startWorker(bus, { WORKER_ID: 'late' }, indexingGate);
    try {
      const health = await w.health();
      expect(health.ok).toBe(false);
      expect(health.details.ingest).toMatchObject({ caughtUp: false, serving: false, lag: 1 });
      await expect(retrieve(bus, 'acme', ['kb'], 'alpha')).rejects.toMatchObject({ code: 'no_responders' });

      indexing.open();
      await w.ready;
      expect((await retrieve(bus, 'acme', ['kb'], 'alpha')).chunks[0]?.docId).toBe('doc');
      const ready = await w.health();
      expect(ready).toMatchObject({
        ok: true,
        details: { ingest: { caughtUp: true, serving: true }, index: { kbs: 1, lexicalChunks: 1, vectorChunks: 1 } },
      });
      // Served without authentication: totals only, no tenant's or kb's name.
      expect(JSON.stringify(ready)).not.toMatch(/acme|"kb"/);
    } finally {
      await w.stop();
      await bus.drain();
    }
  });

  it('in-process retrieval - refused as unavailable until the worker serves, then the same answer as its NATS endpoint, decoded', async () => {
    const bus = createMemoryBroker().connect();
    await ingest(bus, 'acme', 'kb', 'atlas', 'Project Atlas is owned by Mira Chen. Mira Chen leads Platform.', 1);
    await ingest(bus, 'acme', 'kb', 'mira', 'Mira Chen belongs to the Platform Engineering department.', 1);
    const indexingGate = new IndexingGate();
    const indexing = gate();
    indexingGate.held = indexing.opened;
    const w = await startWorker(bus, { WORKER_ID: 'here' }, indexingGate);
    const request = (query: string) => ({
      ctx: {
        questionId: 'q1',
        scope: { tenantId: 'acme', userId: 'u', kbIds: ['kb'], docIds: [] },
        deadlineUnixMs: deadline(),
      },
      query,
      hydeText: '',
      topK: 5,
      hop: 2,
      seeds: [],
    });
    try {
      await expect(w.retrieve(request('Mira Chen'))).rejects.toMatchObject({ code: 'unavailable' });
      indexing.open();
      await w.ready;
      for (const query of ['Who owns Project Atlas?', 'Mira Chen department', 'nothing like this']) {
        const here = await w.retrieve(request(query));
        const overNats = await retrieve(bus, 'acme', ['kb'], query);
        expect(here.chunks.length).toBe(overNats.chunks.length);
        // The wire adds what protobuf fills in for absent fields; every field the worker set is the same.
        for (const [index, chunk] of here.chunks.entries()) {
          expect(overNats.chunks[index]).toMatchObject({ ...chunk, hop: 1 });
        }
        expect({ degraded: here.degraded, workerId: here.workerId }).toEqual({
          degraded: overNats.degraded,
          workerId: overNats.workerId,
        });
      }
    } finally {
      await w.stop();
      await bus.drain();
    }
  });

  it('retrieval - nothing found while document changes wait to be applied is flagged degraded, never a plain "nothing found"', async () => {
    const bus = createMemoryBroker().connect();
    const indexingGate = new IndexingGate();
    const w = await startWorker(bus, { WORKER_ID: 'lagging' }, indexingGate);
    try {
      await w.ready;
      const indexing = gate();
      indexingGate.held = indexing.opened;
      // Another tenant's change waiting says nothing of acme's kb: nothing found is plain.
      await ingest(bus, 'globex', 'kb', 'globex-delta', 'Delta epsilon.', 1);
      expect(await retrieve(bus, 'acme', ['kb'], 'delta')).toMatchObject({ chunks: [], degraded: false });
      await ingest(bus, 'acme', 'kb', 'delta', 'Delta epsilon.', 1);
      const response = await retrieve(bus, 'acme', ['kb'], 'delta');
      expect(response.chunks).toEqual([]);
      expect(response.degraded).toBe(true);
      expect(response.degradedReasons).toEqual([
        'the search index is still catching up with document changes not applied yet',
      ]);
      indexing.open();
      await waitFor(async () => (await retrieve(bus, 'acme', ['kb'], 'delta')).chunks.length > 0);
      expect((await retrieve(bus, 'acme', ['kb'], 'delta')).degraded).toBe(false);
    } finally {
      await w.stop();
      await bus.drain();
    }
  });
});

describe('retrieval-worker breakers', () => {
  it('breakers - only a search path that leaves the process has a breaker; one that runs in it answers as before', async () => {
    const bus = createMemoryBroker().connect();
    await ingest(bus, 'acme', 'kb', 'doc', 'Alpha beta gamma.', 1);
    const remote = await worker(bus, 'remote-paths');
    const local = await worker(bus, 'local-paths', {}, { lexical: true, vector: false });
    try {
      expect((await remote.health()).details.breakers).toEqual({ bm25: 'closed', vector: 'closed' });
      expect((await local.health()).details.breakers).toEqual({ vector: 'closed' });
      const request = {
        ctx: {
          questionId: 'q',
          scope: { tenantId: 'acme', userId: 'u', kbIds: ['kb'], docIds: [] },
          deadlineUnixMs: deadline(),
        },
        query: 'alpha',
        hydeText: '',
        topK: 5,
        hop: 1,
        seeds: [],
      };
      const [here, there] = await Promise.all([local.retrieve(request), remote.retrieve(request)]);
      expect(here.chunks).toEqual(there.chunks);
      expect(here.chunks[0]?.docId).toBe('doc');
    } finally {
      await Promise.all([remote.stop(), local.stop()]);
      await bus.drain();
    }
  });
});

describe('retrieval-worker start-up consistency check', () => {
  it('consistency - sides that disagree at start-up are rebuilt from each other before the worker serves', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'hopline-repair-'));
    try {
      const embedder = new HashingEmbedder();
      const open = () =>
        Promise.all([
          EmbeddedLexicalBackend.open({ dataDir, durable: false }),
          EmbeddedVectorBackend.open({ dimensions: embedder.dimensions, dataDir, durable: false }),
        ]);
      const chunk = (docId: string, text: string, kbId = 'kb') => ({
        chunkId: `${docId}#0`,
        tenantId: 'acme',
        kbId,
        docId,
        docVersion: 1,
        title: docId,
        text,
        span: { start: 0, end: text.length },
        dedupeKey: docId,
        effectiveDate: '',
        sourceUri: '',
      });
      const key = (docId: string, kbId = 'kb') => ({ tenantId: 'acme', kbId, docId, version: 1 });
      // As after a crash between the two sides' writes, or a side whose files were lost: in
      // kb the vector side lacks a document, in kb2 the lexical side does.
      const [lexical, vector] = await open();
      const shared = chunk('shared', 'Orchard ledger.');
      await lexical.upsertDocument(key('shared'), [shared]);
      await vector.upsertDocument(key('shared'), [
        { chunk: shared, vector: embedder.embedOne('shared Orchard ledger.') },
      ]);
      await lexical.upsertDocument(key('only-lexical'), [chunk('only-lexical', 'Harbour lighthouse keeper.')]);
      await vector.upsertDocument(key('only-vector', 'kb2'), [
        {
          chunk: chunk('only-vector', 'Glacier comet orbit.', 'kb2'),
          vector: embedder.embedOne('only-vector Glacier comet orbit.'),
        },
      ]);
      await Promise.all([lexical.close(), vector.close()]);

      const [reopenedLexical, reopenedVector] = await open();
      const bus = createMemoryBroker().connect();
      const started = await startRetrievalWorker({
        config: configSchema.parse({ WORKER_ID: 'repair', DATA_DIR: dataDir }),
        bus,
        lexical: reopenedLexical,
        vector: reopenedVector,
        embedder,
        indexesShared: false,
        embeddedIndexes: { lexical: true, vector: true },
        logger,
        metrics: createMetrics('test', { defaultMetrics: false }),
      });
      await started.ready;
      expect((await started.health()).details).toMatchObject({
        index: { kbs: 2, lexicalChunks: 3, vectorChunks: 3, kbsOutOfStep: 0 },
      });
      expect(await reopenedVector.documentState(key('only-lexical'))).toEqual({
        version: 1,
        deleted: false,
        chunks: 1,
      });
      expect(await reopenedLexical.documentState(key('only-vector', 'kb2'))).toEqual({
        version: 1,
        deleted: false,
        chunks: 1,
      });
      const found = await retrieve(bus, 'acme', ['kb2'], 'glacier comet');
      expect(found.chunks.map((c) => c.docId)).toContain('only-vector');
      await started.stop();
      await bus.drain();
      await Promise.all([reopenedLexical.close(), reopenedVector.close()]);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
