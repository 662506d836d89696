import { busHealth, type Bus, type ServiceHandle } from '@hopline/bus';
import { codecs, documentBodyStream, HoplineError, jetstream, natsServices, subjects } from '@hopline/contracts';
import { createGuard, DEFAULT_BREAKER, type Guard } from '@hopline/resilience';
import { warmUp } from '@hopline/runtime';
import {
  createHybridRetriever,
  createIndexer,
  hybridOptionsFor,
  inProcessGuard,
  withEntityGraph,
  withoutEntityGraph,
  type Embedder,
  type Guard as RetrievalGuard,
  type Indexer,
  type LexicalBackend,
  type VectorBackend,
} from '@hopline/retrieval';
import type { HealthReport, HoplineMetrics, Logger } from '@hopline/telemetry';
import type { EmbeddedIndexes, SearchesInProcess } from './backends.js';
import type { Config } from './config.js';
import type { EntityGraphSupport } from './entity-graph.js';
import { workerIdentity } from './identity.js';
import { startIngestConsumer } from './ingest-consumer.js';
import { IngestProgress } from './ingest-progress.js';
import { kbStatsEndpoint } from './kb-stats-endpoint.js';
import { documentLookupEndpoint } from './lookup-endpoint.js';
import {
  retrieveEndpoint,
  retrieveHandler,
  type Retrieved,
  type VerifiedRetrieveRequest,
} from './retrieve-endpoint.js';

export interface RetrievalWorkerDeps {
  config: Pick<
    Config,
    | 'WORKER_ID'
    | 'DATA_DIR'
    | 'INGEST_CONSUMER_INACTIVE_HOURS'
    | 'INGEST_BATCH_SIZE'
    | 'INGEST_BODY_BUDGET_BYTES'
    | 'FUSION_METHOD'
    | 'RRF_K'
    | 'RRF_WEIGHT_BM25'
    | 'RRF_WEIGHT_VECTOR'
    | 'BM25_CANDIDATES'
    | 'VECTOR_CANDIDATES'
    | 'FUSED_KEEP'
  >;
  bus: Bus;
  lexical: LexicalBackend;
  vector: VectorBackend;
  embedder: Embedder;
  /**
   * True when the indexes are shared by every worker (Elasticsearch and Milvus): the workers
   * then split the ingest stream between them. Embedded indexes belong to one worker, so each
   * worker reads the whole stream through a durable consumer of its own.
   */
  indexesShared: boolean;
  /**
   * Which indexes are embedded (see backends.ts). One that holds nothing at start, as on a first
   * start or once its files were removed, makes a worker with a consumer of its own read the
   * ingest stream from its start, whatever position the server kept for that consumer.
   */
  embeddedIndexes: EmbeddedIndexes;
  /**
   * The search paths that run wholly in this process (see backends.ts): no breaker or timer
   * guards them, only the deadline and the caller's cancellation before they start. Absent:
   * every path is guarded as a remote one.
   */
  searchesInProcess?: SearchesInProcess;
  /**
   * The entity graph beside the indexes that seeded retrievals walk (see entity-graph.ts), or why
   * there is none; a seeded retrieval is then answered by BM25 and vectors with that reason.
   */
  entityGraph?: EntityGraphSupport;
  logger: Logger;
  metrics: HoplineMetrics;
}

export interface RetrievalWorker {
  readonly workerId: string;
  /** Resolves once the index has caught up with the ingest stream and the worker serves retrievals. */
  readonly ready: Promise<void>;
  /**
   * Readiness, without naming any tenant or kb: /readyz is served without authentication, so
   * it carries totals only; the per-kb counts are for the process itself (`indexedChunks`).
   */
  health(): Promise<HealthReport>;
  /**
   * A retrieval answered in this process as the retrieve endpoint answers it over NATS, for a
   * hop-reasoner in the same process (the embedded mode). Refused as `unavailable` until the
   * worker serves: its index has not caught up with the ingest stream.
   */
  retrieve(request: VerifiedRetrieveRequest): Promise<Retrieved>;
  /** Chunks of one kb in the lexical index, for callers in the same process (tests waiting on indexing). */
  indexedChunks(tenantId: string, kbId: string): Promise<number>;
  stop(): Promise<void>;
}

/**
 * The start-up consistency check: sides that disagree (a write that reached one only, a side
 * whose files were lost) are rebuilt from the other where both can list their documents; what
 * is left is logged with how to close it.
 */
async function repairIndex(indexer: Indexer, logger: Logger): Promise<void> {
  const found = await indexer.checkConsistency();
  if (found.consistent) return;
  const { written, report } = await indexer.repair(found);
  logger.warn('index sides disagreed at start-up; repaired from each other', {
    check: 'index-consistency',
    kbs: found.gaps.length,
    documentsWritten: written,
    kbsLeft: report.gaps.length,
  });
  for (const message of report.messages) logger.error(message, { check: 'index-consistency' });
}

/**
 * Whether an embedded index holds nothing. It lists every kb it has held a chunk of, even once
 * their documents are deleted (see KbChunkCount): one that lists none holds nothing the ingest
 * stream gave it.
 */
async function anEmbeddedIndexIsEmpty(
  embedded: EmbeddedIndexes,
  lexical: LexicalBackend,
  vector: VectorBackend,
): Promise<boolean> {
  const sides = [...(embedded.lexical ? [lexical] : []), ...(embedded.vector ? [vector] : [])];
  const counts = await Promise.all(sides.map((side) => side.countChunks()));
  return counts.some((kbs) => kbs.length === 0);
}

/** How often a ready worker announces itself; hop-reasoners forget it after a few missed beats. */
const PRESENCE_INTERVAL_MS = 1_000;
/** How often the index size gauge is refreshed (a count per kb in each index). */
const INDEX_SIZE_INTERVAL_MS = 15_000;

/**
 * Invented retrievals in both scripts the tokenizer reads (a Chinese one loads jieba's
 * dictionary), seeded so that the entity graph is walked too, in a scope no caller is given:
 * they find nothing and load what a first retrieval would.
 */
const WARM_UP_RETRIEVALS = [
  { query: "Which river flows past the lighthouse keeper's town?", seeds: ['lighthouse keeper'] },
  { query: '灯塔看守人出生的小镇旁边流过哪条河？', seeds: ['灯塔看守人'] },
];
const WARM_UP_SCOPE = { tenantId: 'warm-up', kbIds: ['warm-up'], docIds: [] };

/**
 * One retrieval worker. It applies the durable ingest stream to its indexes through a consumer
 * named by its identity (shared by all workers when the indexes are shared), and only once its
 * index has caught up with the stream does it join the retrieve queue group, serve its own
 * retrieve subject and document lookups, and announce itself every second.
 */
export async function startRetrievalWorker(deps: RetrievalWorkerDeps): Promise<RetrievalWorker> {
  const { config, bus, lexical, vector, embedder, logger, metrics } = deps;
  const workerId = await workerIdentity(config.WORKER_ID, config.DATA_DIR);
  const breakers: Guard[] = [];
  const guard = (downstream: string, inProcess = false): RetrievalGuard => {
    if (inProcess) return inProcessGuard;
    const breaker = createGuard({ downstream, breaker: DEFAULT_BREAKER, logger, metrics });
    breakers.push(breaker);
    return breaker;
  };
  const lexicalGuard = guard(lexical.name, deps.searchesInProcess?.lexical);
  const vectorGuard = guard(vector.name, deps.searchesInProcess?.vector);
  // An unset FUSION_METHOD or RRF_WEIGHT_VECTOR leaves the embedder's own choice in place.
  const options = hybridOptionsFor(embedder, {
    fusion: config.FUSION_METHOD,
    rrfK: config.RRF_K,
    bm25Weight: config.RRF_WEIGHT_BM25,
    vectorWeight: config.RRF_WEIGHT_VECTOR,
    bm25Candidates: config.BM25_CANDIDATES,
    vectorCandidates: config.VECTOR_CANDIDATES,
    keep: config.FUSED_KEEP,
  });
  const entityGraph = deps.entityGraph ?? { reason: 'this worker was started without an entity graph' };
  const hybrid = createHybridRetriever({ lexical, vector, embedder, lexicalGuard, vectorGuard, options });
  const retriever =
    'graph' in entityGraph
      ? withEntityGraph(hybrid, entityGraph.graph)
      : withoutEntityGraph(hybrid, entityGraph.reason);
  const indexer = createIndexer({ lexical, vector, embedder });

  // The index size is read from the same per-kb counts the consistency check compares.
  const checkIndex = async () => {
    const report = await indexer.checkConsistency();
    const lexicalChunks = report.kbs.reduce((sum, kb) => sum + kb.lexicalChunks, 0);
    const vectorChunks = report.kbs.reduce((sum, kb) => sum + kb.vectorChunks, 0);
    metrics.indexChunks.set({ worker: workerId, index: 'lexical' }, lexicalChunks);
    metrics.indexChunks.set({ worker: workerId, index: 'vector' }, vectorChunks);
    if ('graph' in entityGraph)
      for (const [kind, count] of Object.entries(entityGraph.graph.size))
        metrics.entityGraphSize.set({ worker: workerId, kind }, count);
    return { ...report, lexicalChunks, vectorChunks };
  };
  await repairIndex(indexer, logger);
  await checkIndex();
  // Cold, a worker's first retrievals ran past the hop-reasoner's budget on a loaded machine and
  // opened its breaker. Warmed only where every search runs in this process: a remote store's
  // first call is not this process's to warm, and a start-up must not wait on it or trip its breaker.
  if (deps.searchesInProcess?.lexical && deps.searchesInProcess.vector)
    await warmUp(
      WARM_UP_RETRIEVALS.map(
        ({ query, seeds }) =>
          () =>
            retriever.retrieve({ query, seeds, scope: WARM_UP_SCOPE, hop: 1, deadlineUnixMs: Date.now() + 60_000 }),
      ),
      logger,
    );
  const indexSize = setInterval(() => {
    checkIndex().catch((error: unknown) => logger.warn('could not count the index', { error }));
  }, INDEX_SIZE_INTERVAL_MS);
  indexSize.unref();

  const [stream, bodies, deadLetters] = await Promise.all([
    bus.durableStream(),
    bus.durableStream(documentBodyStream),
    bus.durableStream({
      name: jetstream.deadLetterStream,
      subjects: [subjects.deadLetter],
      retention: 'dead-letters',
    }),
  ]);
  const durable = deps.indexesShared ? jetstream.ingestConsumer : `${jetstream.ingestConsumer}-${workerId}`;
  // The server keeps this worker's own consumer where the worker's index had got to (for
  // INGEST_CONSUMER_INACTIVE_HOURS after it stops), and the worker id outlives the index files.
  // Resumed by an embedded index that holds nothing (a first start, or its files removed, as a
  // change of embedder asks), it would skip every document before that position, and the worker
  // would serve an empty index as caught up: it reads the stream from its start instead. Asked
  // after the start-up repair, which fills a side from the other where that one still holds its
  // documents. A shared consumer is every worker's position, and the indexes it feeds live
  // outside DATA_DIR: it is never reset.
  const fromStart = !deps.indexesShared && (await anEmbeddedIndexIsEmpty(deps.embeddedIndexes, lexical, vector));
  if (fromStart)
    logger.info('an embedded index holds nothing: reading the ingest stream from its start', {
      ingestConsumer: durable,
    });
  const consumer = await startIngestConsumer({
    bus,
    stream,
    bodies,
    deadLetters,
    indexer,
    logger,
    metrics,
    durable,
    batchSize: config.INGEST_BATCH_SIZE,
    bodyBudgetBytes: config.INGEST_BODY_BUDGET_BYTES,
    fromStart,
    // A worker's own consumer outlives restarts, not the worker: a shared one is never abandoned.
    ...(deps.indexesShared ? {} : { inactiveThresholdMs: config.INGEST_CONSUMER_INACTIVE_HOURS * 3_600_000 }),
  });
  const progress = await IngestProgress.start({ stream, consumer, workerId, metrics, logger });

  let service: ServiceHandle | undefined;
  let presence: NodeJS.Timeout | undefined;
  let stopping = false;
  const announce = () =>
    bus.publish(subjects.retrievalPresence, codecs.workerPresence.encode({ workerId, ingestLag: progress.lag ?? 0 }));
  const retrieveDeps = {
    retriever,
    workerId,
    metrics,
    changesWaiting: (tenantId: string, kbIds: readonly string[]) =>
      progress.changesWaitingOn(kbIds.map((kbId) => subjects.ingest(tenantId, kbId))),
  };
  const retrieveHere = retrieveHandler(retrieveDeps);
  const ready = progress.ready.then(async () => {
    if (stopping) return;
    const endpoint = (name: string, subject: string) => retrieveEndpoint({ ...retrieveDeps, name, subject });
    service = await bus.serve({
      name: natsServices.retrievalWorker,
      version: '0.1.0',
      description: 'Hybrid BM25 + vector retrieval, scoped to the caller',
      endpoints: [
        endpoint('retrieve', subjects.retrieve),
        endpoint('retrieve-direct', subjects.retrieveAt(workerId)),
        documentLookupEndpoint({ lexical, vector, progress }),
        kbStatsEndpoint({ lexical, progress, workerId }),
      ],
    });
    announce();
    presence = setInterval(() => {
      try {
        announce();
      } catch (error) {
        logger.warn('could not announce the worker', { error });
      }
    }, PRESENCE_INTERVAL_MS);
    presence.unref();
    logger.info('retrieval worker ready', {
      workerId,
      ingestConsumer: durable,
      lexical: lexical.name,
      vector: vector.name,
      embedder: embedder.model,
      fusion: options.fusion,
      vectorWeight: options.vectorWeight,
      entityGraph: graphState(),
    });
  });
  function graphState() {
    return 'graph' in entityGraph
      ? { kept: true, ...entityGraph.graph.size }
      : { kept: false, reason: entityGraph.reason };
  }
  ready.catch((error: unknown) => logger.error('retrieval worker could not start serving', { error }));

  return {
    workerId,
    ready,
    async health() {
      const report = await checkIndex();
      const busState = busHealth(bus);
      const serving = service !== undefined;
      return {
        ok: serving && (lexicalGuard.state !== 'open' || vectorGuard.state !== 'open') && busState.ok,
        details: {
          workerId,
          ingest: { consumer: durable, caughtUp: progress.isReady, serving, lag: progress.lag },
          bus: busState.details,
          breakers: Object.fromEntries(breakers.map((breaker) => [breaker.downstream, breaker.state])),
          // Which kbs disagree is in the worker's log at start (the consistency check), not here.
          index: {
            kbs: report.kbs.length,
            lexicalChunks: report.lexicalChunks,
            vectorChunks: report.vectorChunks,
            // Searchable already; how far the HNSW graphs are behind (operations.md, index files).
            vectorsBuffered: vector.bufferedVectors?.() ?? 0,
            kbsOutOfStep: report.gaps.length,
          },
          entityGraph: graphState(),
        },
      };
    },
    async retrieve(request) {
      if (service === undefined) {
        throw new HoplineError('unavailable', 'the retrieval worker is not serving yet: its index is catching up');
      }
      return retrieveHere(request);
    },
    async indexedChunks(tenantId, kbId) {
      const { kbs } = await indexer.checkConsistency();
      return kbs.find((kb) => kb.tenantId === tenantId && kb.kbId === kbId)?.lexicalChunks ?? 0;
    },
    async stop() {
      stopping = true;
      clearInterval(presence);
      clearInterval(indexSize);
      progress.stop();
      await service?.stop();
      await consumer.stop();
      for (const breaker of breakers) breaker.shutdown();
    },
  };
}
