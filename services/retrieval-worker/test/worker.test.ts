import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectNatsBus, createMemoryBroker, type Bus } from '@hopline/bus';
import { codecs, RemoteError, subjects } from '@hopline/contracts';
import { EmbeddedLexicalBackend, EmbeddedVectorBackend, HashingEmbedder } from '@hopline/retrieval';
import { createLogger, createMetrics } from '@hopline/telemetry';
import { startNats, waitFor } from '@hopline/test-support';
import { configSchema } from '../src/config.js';
import { startRetrievalWorker, type RetrievalWorker } from '../src/worker.js';

const nats = await startNats();
const logger = createLogger('retrieval-worker-test', { level: 'silent' });

async function worker(bus: Bus, workerId: string, env: Record<string, string> = {}): Promise<RetrievalWorker> {
  const embedder = new HashingEmbedder();
  const [lexical, vector] = await Promise.all([
    EmbeddedLexicalBackend.open(),
    EmbeddedVectorBackend.open({ dimensions: embedder.dimensions }),
  ]);
  const config = configSchema.parse({ WORKER_ID: workerId, ...env });
  return startRetrievalWorker({
    config,
    bus,
    lexical,
    vector,
    embedder,
    indexesShared: false,
    logger,
    metrics: createMetrics('test', { defaultMetrics: false }),
  });
}

const deadline = () => Date.now() + 5_000;
const retrieve = (bus: Bus, tenantId: string, kbIds: string[], query: string) =>
  bus
    .request(
      subjects.retrieve,
      codecs.retrieveRequest.encode({
        ctx: { questionId: 'q1', scope: { tenantId, userId: 'u', kbIds }, deadlineUnixMs: deadline() },
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

const chunkCount = async (w: RetrievalWorker, tenantId: string, kbId: string) =>
  ((await w.health()).details.kbs as Array<{ tenantId: string; kbId: string; lexicalChunks: number }>).find(
    (kb) => kb.tenantId === tenantId && kb.kbId === kbId,
  )?.lexicalChunks ?? 0;

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
    const deadLetters = await client.durableStream({ name: 'HOPLINE_DEADLETTER', subjects: [subjects.deadLetter] });
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
});

describe('retrieval-worker on the in-memory bus', () => {
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
