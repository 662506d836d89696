import { join } from 'node:path';
import { ValidationError } from '@hopline/contracts';
import {
  EmbeddedLexicalBackend,
  EmbeddedVectorBackend,
  HashingEmbedder,
  OpenAiEmbedder,
  type Embedder,
  type LexicalBackend,
  type VectorBackend,
} from '@hopline/retrieval';
import type { Config } from './config.js';
import { keepEntityGraph, keepSharedEntityGraph, type EntityGraphSupport } from './entity-graph.js';
import { checkIndexEmbedder, reindexAdvice } from './index-identity.js';

export interface Backends {
  lexical: LexicalBackend;
  vector: VectorBackend;
  embedder: Embedder;
  /** Both indexes are shared by every worker (remote); see RetrievalWorkerDeps.indexesShared. */
  indexesShared: boolean;
  /** Which indexes are embedded; see RetrievalWorkerDeps.embeddedIndexes. */
  embeddedIndexes: EmbeddedIndexes;
  /** Which search paths run in this process; see RetrievalWorkerDeps.searchesInProcess. */
  searchesInProcess: SearchesInProcess;
  /** Kept beside the lexical index, embedded or Elasticsearch (see entity-graph.ts). */
  entityGraph: EntityGraphSupport;
}

/** Which indexes are embedded: kept under this worker's DATA_DIR, by this worker alone. */
export interface EmbeddedIndexes {
  lexical: boolean;
  vector: boolean;
}

/**
 * Which search paths run wholly in this process: BM25 on the embedded index; vectors on the
 * embedded index with an embedder in the process (the hashing embedder, not an endpoint).
 */
export interface SearchesInProcess {
  lexical: boolean;
  vector: boolean;
}

/**
 * Where the remote adapters report start-up choices (analyzer, collections created), and the
 * embedded indexes a snapshot they could not take.
 */
export interface BackendLog {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
}

type BackendConfig = Pick<
  Config,
  | 'DATA_DIR'
  | 'ELASTICSEARCH_URL'
  | 'ELASTICSEARCH_INDEX'
  | 'ELASTICSEARCH_BULK_MAX_OPERATIONS'
  | 'ELASTICSEARCH_BULK_MAX_BYTES'
  | 'ELASTICSEARCH_GRAPH_SYNC_MS'
  | 'MILVUS_ADDRESS'
  | 'MILVUS_TOKEN'
  | 'MILVUS_COLLECTION'
  | 'MILVUS_UPSERT_BATCH'
  | 'OPENAI_BASE_URL'
  | 'OPENAI_API_KEY'
  | 'EMBEDDING_MODEL'
  | 'EMBEDDING_DIMENSIONS'
  | 'BM25_K1'
  | 'BM25_B'
>;

/**
 * Chooses each backend from the configuration: the embedded indexes persisted under DATA_DIR
 * and the offline hashing embedder, unless ELASTICSEARCH_URL / MILVUS_ADDRESS / OPENAI_BASE_URL
 * name a real component. Each switch is independent.
 */
export async function openBackends(
  config: BackendConfig,
  log: BackendLog = { info() {}, warn() {} },
): Promise<Backends> {
  const embedder: Embedder = config.OPENAI_BASE_URL
    ? new OpenAiEmbedder({
        baseURL: config.OPENAI_BASE_URL,
        ...(config.OPENAI_API_KEY ? { apiKey: config.OPENAI_API_KEY } : {}),
        model: config.EMBEDDING_MODEL,
        dimensions: config.EMBEDDING_DIMENSIONS,
      })
    : new HashingEmbedder();
  const bm25 = { k1: config.BM25_K1, b: config.BM25_B };
  const { ELASTICSEARCH_URL: elasticsearchUrl, MILVUS_ADDRESS: milvusAddress } = config;
  const [lexicalSide, vector] = await bothOrNeither(
    elasticsearchUrl
      ? remoteAdapters()
          .then(({ createElasticsearchLexicalBackend }) =>
            createElasticsearchLexicalBackend({
              node: elasticsearchUrl,
              index: config.ELASTICSEARCH_INDEX,
              bm25,
              bulkMaxOperations: config.ELASTICSEARCH_BULK_MAX_OPERATIONS,
              bulkMaxBytes: config.ELASTICSEARCH_BULK_MAX_BYTES,
              log,
            }),
          )
          .then((lexical) =>
            keepSharedEntityGraph(lexical, { syncIntervalMs: config.ELASTICSEARCH_GRAPH_SYNC_MS, log }).catch(
              async (error: unknown) => {
                await lexical.close();
                throw error;
              },
            ),
          )
      : EmbeddedLexicalBackend.open({
          dataDir: join(config.DATA_DIR, 'bm25'),
          bm25,
          onSnapshotFailed: snapshotFailed(log, 'lexical'),
        }).then(keepEntityGraph),
    milvusAddress
      ? remoteAdapters().then(({ createMilvusVectorBackend }) =>
          createMilvusVectorBackend({
            address: milvusAddress,
            ...(config.MILVUS_TOKEN ? { token: config.MILVUS_TOKEN } : {}),
            collection: config.MILVUS_COLLECTION,
            dimensions: embedder.dimensions,
            upsertBatchSize: config.MILVUS_UPSERT_BATCH,
            log,
          }),
        )
      : openEmbeddedVectors(join(config.DATA_DIR, 'vectors'), config.DATA_DIR, embedder, snapshotFailed(log, 'vector')),
  );
  const { lexical, entityGraph } = lexicalSide;
  return {
    lexical,
    vector,
    embedder,
    // An embedded side is per worker, so every worker must see every ingest command.
    indexesShared: Boolean(config.ELASTICSEARCH_URL && config.MILVUS_ADDRESS),
    embeddedIndexes: { lexical: !elasticsearchUrl, vector: !milvusAddress },
    searchesInProcess: { lexical: !elasticsearchUrl, vector: !milvusAddress && embedder instanceof HashingEmbedder },
    entityGraph,
  };
}

/** An embedded index's snapshot that could not be taken: its writes stand, in a growing log. */
const snapshotFailed = (log: BackendLog, index: string) => (error: unknown) =>
  log.warn('a snapshot of an embedded index could not be taken; its writes go on in its log, which grows', {
    index,
    error,
  });

/** Loaded only when configured: their client libraries take seconds to import (see remote.ts). */
const remoteAdapters = () => import('@hopline/retrieval/remote');

/** The embedded vector index, refused when another embedder built it (see index-identity.ts). */
async function openEmbeddedVectors(
  indexDir: string,
  dataDir: string,
  embedder: Embedder,
  onSnapshotFailed: (error: unknown) => void,
): Promise<VectorBackend> {
  await checkIndexEmbedder(indexDir, dataDir, embedder);
  try {
    return await EmbeddedVectorBackend.open({ dataDir: indexDir, dimensions: embedder.dimensions, onSnapshotFailed });
  } catch (error) {
    // An index from before the identity file, built with vectors of another length.
    if (error instanceof RangeError)
      throw new ValidationError(
        `the vector index in ${indexDir} does not fit the configured embedder (${error.message}): ${reindexAdvice(indexDir, dataDir)}`,
        {
          cause: error,
        },
      );
    throw error;
  }
}

type LexicalSide = { lexical: LexicalBackend; entityGraph: EntityGraphSupport };

/** Opens both; when one fails, closes the other before failing, so nothing is left connected. */
async function bothOrNeither(
  lexical: Promise<LexicalSide>,
  vector: Promise<VectorBackend>,
): Promise<[LexicalSide, VectorBackend]> {
  const [lexicalResult, vectorResult] = await Promise.allSettled([lexical, vector]);
  if (lexicalResult.status === 'fulfilled' && vectorResult.status === 'fulfilled')
    return [lexicalResult.value, vectorResult.value];
  await Promise.allSettled(
    [
      lexicalResult.status === 'fulfilled' ? lexicalResult.value.lexical : undefined,
      vectorResult.status === 'fulfilled' ? vectorResult.value : undefined,
    ].flatMap((opened) => (opened ? [opened.close()] : [])),
  );
  throw lexicalResult.status === 'rejected' ? lexicalResult.reason : (vectorResult as PromiseRejectedResult).reason;
}
