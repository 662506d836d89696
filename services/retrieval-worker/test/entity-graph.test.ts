import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryBroker, type Bus } from '@hopline/bus';
import { codecs, subjects } from '@hopline/contracts';
import {
  EmbeddedLexicalBackend,
  EmbeddedVectorBackend,
  HashingEmbedder,
  type DocumentChange,
  type IndexedChunk,
  type LexicalBackend,
  type SharedGraphSource,
} from '@hopline/retrieval';
import { createLogger, createMetrics, type HoplineMetrics } from '@hopline/telemetry';
import { waitFor } from '@hopline/test-support';
import { afterEach, describe, expect, it } from 'vitest';
import { openBackends } from '../src/backends.js';
import { configSchema } from '../src/config.js';
import { keepEntityGraph, keepSharedEntityGraph, type EntityGraphSupport } from '../src/entity-graph.js';
import { startRetrievalWorker, type RetrievalWorker } from '../src/worker.js';

const logger = createLogger('retrieval-worker-graph-test', { level: 'silent' });
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

// Untitled documents: only the name two of them share leads from the partner to the birthplace.
const COLLAB = 'Ada Lovelace wrote the first program with Charles Babbage in 1843.';
const BORN = 'Charles Babbage came into the world in Walworth, Surrey.';
const OTHER = 'Grace Hopper wrote the first compiler.';

async function start(
  bus: Bus,
  graph: 'embedded' | EntityGraphSupport,
): Promise<RetrievalWorker & { stopAll(): Promise<void>; metrics: HoplineMetrics }> {
  const embedder = new HashingEmbedder();
  const [embeddedLexical, vector] = await Promise.all([
    EmbeddedLexicalBackend.open(),
    EmbeddedVectorBackend.open({ dimensions: embedder.dimensions }),
  ]);
  const { lexical, entityGraph } =
    graph === 'embedded' ? await keepEntityGraph(embeddedLexical) : { lexical: embeddedLexical, entityGraph: graph };
  const metrics = createMetrics('test', { defaultMetrics: false });
  const worker = await startRetrievalWorker({
    config: configSchema.parse({ WORKER_ID: 'graph-worker' }),
    bus,
    lexical,
    vector,
    embedder,
    indexesShared: false,
    embeddedIndexes: { lexical: true, vector: true },
    entityGraph,
    logger,
    metrics,
  });
  await worker.ready;
  const stopAll = async () => {
    await worker.stop();
    await Promise.all([lexical.close(), vector.close()]);
  };
  cleanups.push(stopAll);
  return Object.assign(worker, { stopAll, metrics });
}

async function command(bus: Bus, tenantId: string, kbId: string, docId: string, text: string | null, version = 1) {
  const stream = await bus.durableStream();
  await stream.publish(
    subjects.ingest(tenantId, kbId),
    codecs.ingestCommand.encode(
      text === null
        ? { delete: { tenantId, kbId, docId, version } }
        : { upsert: { tenantId, kbId, docId, version, title: '', text } },
    ),
    { msgId: `${text === null ? 'delete' : 'upsert'}/${tenantId}/${kbId}/${docId}/${version}` },
  );
}

const retrieve = (bus: Bus, tenantId: string, query: string, seeds: string[]) =>
  bus
    .request(
      subjects.retrieve,
      codecs.retrieveRequest.encode({
        ctx: {
          questionId: 'q1',
          scope: { tenantId, userId: 'u', kbIds: ['kb'], docIds: [] },
          deadlineUnixMs: Date.now() + 5_000,
        },
        query,
        topK: 2,
        hop: 2,
        seeds,
      }),
      { timeoutMs: 5_000 },
    )
    .then((reply) => codecs.retrieveResponse.decode(reply.data));

/** The value of one series on the worker's registry, 0 when it has none. */
async function sample(metrics: HoplineMetrics, name: string, labels: Record<string, string>): Promise<number> {
  const metric = await metrics.registry.getSingleMetric(name)?.get();
  const found = metric?.values.find(
    (value) =>
      Object.entries(labels).every(([label, wanted]) => String(value.labels[label]) === wanted) &&
      (!('metricName' in value) || value.metricName === name || value.metricName === `${name}_count`),
  );
  return found?.value ?? 0;
}

const docIds = (response: { chunks: Array<{ docId: string }> }) => response.chunks.map((chunk) => chunk.docId);

describe('retrieval-worker entity graph', () => {
  it('graph - seeds reach a bridge chunk through the worker, which follows ingest and delete, per tenant', async () => {
    const bus = createMemoryBroker().connect();
    const worker = await start(bus, 'embedded');
    await command(bus, 'acme', 'kb', 'collab', COLLAB);
    await command(bus, 'acme', 'kb', 'born', BORN);
    await command(bus, 'acme', 'kb', 'other', OTHER);
    // Another tenant names the same people under the same kb id.
    await command(bus, 'globex', 'kb', 'secret', 'Charles Babbage hid the Globex ledger.');
    await waitFor(async () => (await worker.indexedChunks('globex', 'kb')) > 0, { timeoutMs: 5_000 });

    const query = 'partner of Ada Lovelace';
    expect(docIds(await retrieve(bus, 'acme', query, []))).not.toContain('born');
    const seeded = await retrieve(bus, 'acme', query, [query]);
    expect(seeded.chunks.find((chunk) => chunk.docId === 'born')?.foundBy).toBe('ENTITY_GRAPH');
    expect(seeded.noGraphReason).toBe('');
    // The walk from "Charles Babbage" stays in acme's graph.
    expect(docIds(await retrieve(bus, 'acme', query, [query, 'Charles Babbage']))).not.toContain('secret');
    expect(docIds(await retrieve(bus, 'globex', 'ledger', ['Charles Babbage']))).toEqual(['secret']);

    await command(bus, 'acme', 'kb', 'born', null, 1);
    await waitFor(async () => (await worker.indexedChunks('acme', 'kb')) === 2, { timeoutMs: 5_000 });
    expect(docIds(await retrieve(bus, 'acme', query, [query]))).not.toContain('born');
    expect((await worker.health()).details).toMatchObject({ entityGraph: { kept: true, chunks: 3 } });

    // Every seeded retrieval above walked the graph, and each walk was timed; the size is the health's.
    expect(await sample(worker.metrics, 'hopline_seeded_retrievals_total', { graph: 'walked' })).toBe(4);
    expect(await sample(worker.metrics, 'hopline_seeded_retrievals_total', { graph: 'none' })).toBe(0);
    expect(await sample(worker.metrics, 'hopline_entity_graph_walk_duration_seconds', {})).toBe(4);
    const graphSize = (kind: string) =>
      sample(worker.metrics, 'hopline_entity_graph_size', { worker: 'graph-worker', kind });
    expect(await graphSize('chunks')).toBe(3);
    expect(await graphSize('entities')).toBeGreaterThan(0);
    expect(await graphSize('edges')).toBeGreaterThanOrEqual(await graphSize('entities'));
  });

  it('graph - a worker that keeps no graph answers seeded retrievals from BM25 and vectors and says why', async () => {
    const bus = createMemoryBroker().connect();
    const reason = 'this deployment keeps no entity graph';
    const worker = await start(bus, { reason });
    await command(bus, 'acme', 'kb', 'collab', COLLAB);
    await command(bus, 'acme', 'kb', 'born', BORN);
    await waitFor(async () => (await worker.indexedChunks('acme', 'kb')) === 2, { timeoutMs: 5_000 });
    const seeded = await retrieve(bus, 'acme', 'partner of Ada Lovelace', ['Ada Lovelace']);
    expect(seeded.noGraphReason).toBe(reason);
    expect(seeded.chunks.every((chunk) => chunk.foundBy !== 'ENTITY_GRAPH')).toBe(true);
    expect((await retrieve(bus, 'acme', 'partner of Ada Lovelace', [])).noGraphReason).toBe('');
    expect(await sample(worker.metrics, 'hopline_seeded_retrievals_total', { graph: 'none' })).toBe(1);
    expect(await sample(worker.metrics, 'hopline_entity_graph_walk_duration_seconds', {})).toBe(0);
    expect((await worker.health()).details).toMatchObject({
      entityGraph: { kept: false, reason },
    });
  });

  it('graph - a restarted worker finds its graph in DATA_DIR, as its indexes', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'hopline-graph-worker-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const config = configSchema.parse({ DATA_DIR: dataDir });
    const first = await openBackends(config);
    await first.lexical.upsertDocument({ tenantId: 'acme', kbId: 'kb', docId: 'born', version: 1 }, [
      {
        chunkId: 'born#0',
        tenantId: 'acme',
        kbId: 'kb',
        docId: 'born',
        docVersion: 1,
        title: '',
        text: BORN,
        span: { start: 0, end: BORN.length },
        dedupeKey: 'born#0',
        effectiveDate: '',
        sourceUri: '',
      },
    ]);
    await Promise.all([first.lexical.close(), first.vector.close()]);
    const again = await openBackends(config);
    cleanups.push(() => Promise.all([again.lexical.close(), again.vector.close()]));
    if (!('graph' in again.entityGraph)) throw new Error('the embedded worker keeps a graph');
    const { graph } = again.entityGraph;
    expect(graph.size.chunks).toBe(1);
    const scope = { tenantId: 'acme', kbIds: ['kb'] };
    expect(graph.expand({ scope, seeds: ['Walworth'], limit: 5 }).map(({ chunk }) => chunk.docId)).toEqual(['born']);
  });

  it('graph - over a shared index the worker relinks what other workers wrote every sync interval, and says once when it cannot read', async () => {
    // The shared index as the graph reads it (Elasticsearch in production): records and chunks.
    const chunkOf = (docId: string, text: string): IndexedChunk => ({
      chunkId: `${docId}#0`,
      tenantId: 'acme',
      kbId: 'kb',
      docId,
      docVersion: 1,
      title: '',
      text,
      span: { start: 0, end: text.length },
      dedupeKey: `${docId}#0`,
      effectiveDate: '',
      sourceUri: '',
    });
    const stored = [chunkOf('born', BORN)];
    let away = false;
    let failedReads = 0;
    let closed = false;
    const records = (): DocumentChange[] =>
      stored.map((chunk) => ({ doc: { ...chunk, version: chunk.docVersion }, deleted: false, chunks: 1 }));
    const source: Partial<LexicalBackend> & SharedGraphSource = {
      name: 'shared',
      async *documentChanges() {
        if (away) {
          failedReads += 1;
          throw new Error('connect ECONNREFUSED');
        }
        yield records();
      },
      readChunks: async (docs) => stored.filter((chunk) => docs.some((doc) => doc.docId === chunk.docId)),
      documentStates: async (keys) => keys.map(() => undefined),
      close: async () => void (closed = true),
    };
    const lines: Array<[string, string]> = [];
    const log = {
      info: (message: string) => void lines.push(['info', message]),
      warn: (message: string) => void lines.push(['warn', message]),
    };
    const { lexical, entityGraph } = await keepSharedEntityGraph(source as LexicalBackend & SharedGraphSource, {
      syncIntervalMs: 10,
      log,
    });
    if (!('graph' in entityGraph)) throw new Error('a worker over a shared index keeps a graph');
    const walk = (seed: string) =>
      entityGraph.graph
        .expand({ scope: { tenantId: 'acme', kbIds: ['kb'] }, seeds: [seed], limit: 5 })
        .map(({ chunk }) => chunk.docId);
    expect(walk('Walworth')).toEqual(['born']);

    away = true;
    // Three failed syncs, one warning.
    await waitFor(() => failedReads >= 3);
    expect(lines).toEqual([['warn', expect.stringMatching(/could not read the writes of other workers/)]]);
    stored.push(chunkOf('collab', COLLAB));
    away = false;
    await waitFor(() => walk('Ada Lovelace').includes('collab'));
    expect(lines.at(-1)).toEqual(['info', expect.stringMatching(/reading the writes of other workers again/)]);
    await lexical.close();
    expect(closed).toBe(true);
  });
});
