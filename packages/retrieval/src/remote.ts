// The remote adapters, apart from the package's main entry so that only a process configured
// for them loads their clients (@elastic/elasticsearch and @zilliz/milvus2-sdk-node took 3.8 s
// and 4.7 s to import on a loaded 2-core machine, most of an embedded start; see
// bench/results/ingestion.md).
export {
  createElasticsearchLexicalBackend,
  DEFAULT_ELASTICSEARCH_INDEX,
  ElasticsearchLexicalBackend,
} from './backends/elasticsearch/elasticsearch-lexical-backend.js';
export type { ElasticsearchLexicalBackendOptions } from './backends/elasticsearch/elasticsearch-lexical-backend.js';
export type { ElasticsearchSetupLog, TextAnalyzer } from './backends/elasticsearch/index-setup.js';
export {
  createMilvusVectorBackend,
  DEFAULT_MILVUS_COLLECTION,
  MilvusVectorBackend,
} from './backends/milvus/milvus-vector-backend.js';
export type { MilvusVectorBackendOptions } from './backends/milvus/milvus-vector-backend.js';
export { DEFAULT_MILVUS_HNSW } from './backends/milvus/collections.js';
export type { HnswParameters as MilvusHnswParameters, MilvusSetupLog } from './backends/milvus/collections.js';
