import { hostname } from 'node:os';
import { busHealth, type Bus, type ServiceHandle } from '@hopline/bus';
import { jetstream, natsServices, subjects, subjectToken } from '@hopline/contracts';
import { createGuard, DEFAULT_BREAKER, type Guard } from '@hopline/resilience';
import {
  createHybridRetriever,
  createIndexer,
  hybridOptionsFor,
  type Embedder,
  type LexicalBackend,
  type VectorBackend,
} from '@hopline/retrieval';
import type { HealthReport, HoplineMetrics, Logger } from '@hopline/telemetry';
import type { Config } from './config.js';
import { startIngestConsumer } from './ingest-consumer.js';
import { retrieveEndpoint } from './retrieve-endpoint.js';

export interface RetrievalWorkerDeps {
  config: Pick<
    Config,
    | 'WORKER_ID'
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
  logger: Logger;
  metrics: HoplineMetrics;
}

export interface RetrievalWorker {
  readonly workerId: string;
  health(): Promise<HealthReport>;
  stop(): Promise<void>;
}

/**
 * One retrieval worker: answers retrieve requests in the shared queue group (so more workers
 * means more capacity) and applies the durable ingest stream to its indexes.
 */
export async function startRetrievalWorker(deps: RetrievalWorkerDeps): Promise<RetrievalWorker> {
  const { config, bus, lexical, vector, embedder, logger, metrics } = deps;
  const workerId = config.WORKER_ID ?? hostname();
  const guard = (downstream: string): Guard => createGuard({ downstream, breaker: DEFAULT_BREAKER, logger, metrics });
  const lexicalGuard = guard(lexical.name);
  const vectorGuard = guard(vector.name);
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
  const retriever = createHybridRetriever({ lexical, vector, embedder, lexicalGuard, vectorGuard, options });
  const indexer = createIndexer({ lexical, vector, embedder });

  const consistency = await indexer.checkConsistency();
  if (!consistency.consistent) {
    for (const message of consistency.messages) logger.error(message, { check: 'index-consistency' });
  }

  const [stream, deadLetters] = await Promise.all([
    bus.durableStream(),
    bus.durableStream({
      name: jetstream.deadLetterStream,
      subjects: [subjects.deadLetter],
      retention: 'dead-letters',
    }),
  ]);
  const service: ServiceHandle = await bus.serve({
    name: natsServices.retrievalWorker,
    version: '0.1.0',
    description: 'Hybrid BM25 + vector retrieval, scoped to the caller',
    endpoints: [retrieveEndpoint({ retriever, workerId, metrics })],
  });
  const durable = deps.indexesShared
    ? jetstream.ingestConsumer
    : `${jetstream.ingestConsumer}-${subjectToken(workerId, 'WORKER_ID')}`;
  const consumer = await startIngestConsumer({ bus, stream, deadLetters, indexer, logger, metrics, durable });
  logger.info('retrieval worker ready', {
    workerId,
    ingestConsumer: durable,
    lexical: lexical.name,
    vector: vector.name,
    embedder: embedder.model,
    fusion: options.fusion,
    vectorWeight: options.vectorWeight,
  });

  return {
    workerId,
    async health() {
      const report = await indexer.checkConsistency();
      const busState = busHealth(bus);
      return {
        ok: (lexicalGuard.state !== 'open' || vectorGuard.state !== 'open') && busState.ok,
        details: {
          workerId,
          bus: busState.details,
          breakers: { [lexical.name]: lexicalGuard.state, [vector.name]: vectorGuard.state },
          kbs: report.kbs,
          gaps: report.messages,
        },
      };
    },
    async stop() {
      await service.stop();
      await consumer.stop();
      lexicalGuard.shutdown();
      vectorGuard.shutdown();
    },
  };
}
