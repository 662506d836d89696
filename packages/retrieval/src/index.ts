export * from './backends/types.js';
export { assertScope } from './backends/scope.js';
export { indexedChunkSchema } from './backends/chunk-schema.js';
export { Bm25Index, DEFAULT_BM25_PARAMETERS } from './lexical/bm25-index.js';
export type { Bm25Hit, Bm25Parameters, Bm25SearchResult } from './lexical/bm25-index.js';
export { EmbeddedLexicalBackend, LEXICAL_LOG_FILE, lexicalTerms } from './lexical/embedded-lexical-backend.js';
export type { EmbeddedLexicalBackendOptions } from './lexical/embedded-lexical-backend.js';
export { embeddingText, normalizeInPlace } from './vector/embedder.js';
export type { Embedder, FusionDefaults } from './vector/embedder.js';
export { HashingEmbedder } from './vector/hashing-embedder.js';
export type { HashingEmbedderOptions } from './vector/hashing-embedder.js';
export type { VectorHit, VectorIndex } from './vector/vector-index.js';
export { FlatVectorIndex } from './vector/flat-vector-index.js';
export { DEFAULT_HNSW_PARAMETERS, HnswVectorIndex } from './vector/hnsw-vector-index.js';
export type { HnswParameters } from './vector/hnsw-vector-index.js';
export { AdaptiveVectorIndex, DEFAULT_FLAT_LIMIT } from './vector/adaptive-vector-index.js';
export { EmbeddedVectorBackend, VECTOR_LOG_FILE } from './vector/embedded-vector-backend.js';
export type { EmbeddedVectorBackendOptions } from './vector/embedded-vector-backend.js';
export { chunkDocument } from './chunking/chunker.js';
export type { ChunkableDocument, ChunkerOptions } from './chunking/chunker.js';
export { dedupeKeyFor } from './chunking/dedupe-key.js';
export { createDeadlineGuard, inProcessGuard } from './hybrid/guard.js';
export type { Guard, GuardCallOptions } from './hybrid/guard.js';
export { fuse, fuseByRelativeScore, fuseByRrf, FUSION_METHODS } from './hybrid/fusion.js';
export type { FusedCandidate, FusionMethod, FusionOptions, RankedList, SearchPath } from './hybrid/fusion.js';
export {
  chunkFields,
  createHybridRetriever,
  DEFAULT_HYBRID_OPTIONS,
  hybridOptionsFor,
  toChunk,
} from './hybrid/hybrid-retriever.js';
export type {
  HybridRetriever,
  HybridRetrieverDependencies,
  HybridRetrieverOptions,
  RetrieveInput,
  RetrieveResult,
} from './hybrid/hybrid-retriever.js';
export { createEntityGraph } from './graph/entity-graph.js';
export type { EntityExtractor, EntityGraph, EntityGraphSize, ExpandRequest } from './graph/entity-graph.js';
export { graphIndexedLexical, loadEntityGraph } from './graph/graph-indexing.js';
export { createSharedGraphSync } from './graph/shared-graph-sync.js';
export type { DocumentChange, SharedGraphSource, SyncReport } from './graph/shared-graph-sync.js';
export { withEntityGraph, withoutEntityGraph } from './graph/graph-retriever.js';
export type { SeededRetrieveInput, SeededRetrieveResult, SeededRetriever } from './graph/graph-retriever.js';
export { createIndexer } from './indexing/indexer.js';
export type { IndexAttempt, IndexResult, Indexer, IndexerDependencies } from './indexing/indexer.js';
export { compareChunkCounts } from './indexing/consistency.js';
export type { ConsistencyReport, KbCountComparison } from './indexing/consistency.js';
export { decideDelete, decideUpsert } from './storage/versioning.js';
export { rerankText } from './rerank/relevance-scorer.js';
export type { RelevanceScorer } from './rerank/relevance-scorer.js';
export { createLexicalScorer } from './rerank/lexical-scorer.js';
export type { LexicalScorerOptions } from './rerank/lexical-scorer.js';
export { createCrossEncoderClient, DEFAULT_RERANK_MAX_BATCH } from './rerank/cross-encoder-client.js';
export type { CrossEncoderClientOptions, RerankApi } from './rerank/cross-encoder-client.js';
export { jaccard, minMaxScale, selectByMmr } from './rerank/mmr.js';
export type { MmrOptions } from './rerank/mmr.js';
export { compressToBudget } from './rerank/compress.js';
export type { CompressionResult } from './rerank/compress.js';
export { createReranker, DEFAULT_RERANK } from './rerank/reranker.js';
export type { RerankDefaults, RerankerDependencies, RerankInput, RerankOutput, Reranker } from './rerank/reranker.js';
export { OpenAiEmbedder } from './vector/openai-embedder.js';
export type { OpenAiEmbedderOptions } from './vector/openai-embedder.js';
// The Elasticsearch and Milvus adapters are in './remote.ts' ('@hopline/retrieval/remote'): their
// client libraries take seconds to load, which an embedded start would pay for nothing.
