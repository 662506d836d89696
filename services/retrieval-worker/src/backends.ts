import { join } from 'node:path';
import { EmbeddedLexicalBackend, EmbeddedVectorBackend, HashingEmbedder, type Embedder, type LexicalBackend, type VectorBackend } from '@hopline/retrieval';
import type { Config } from './config.js';

export interface Backends {
  lexical: LexicalBackend;
  vector: VectorBackend;
  embedder: Embedder;
  /** Both indexes are shared by every worker (remote); see RetrievalWorkerDeps.indexesShared. */
  indexesShared: boolean;
}

/**
 * Chooses each backend from the configuration: the embedded indexes persisted under DATA_DIR
 * unless ELASTICSEARCH_URL / MILVUS_ADDRESS / OPENAI_BASE_URL name a real component.
 */
export async function openBackends(config: Config): Promise<Backends> {
  if (config.ELASTICSEARCH_URL || config.MILVUS_ADDRESS || config.OPENAI_BASE_URL) {
    throw new Error(
      'ELASTICSEARCH_URL, MILVUS_ADDRESS and OPENAI_BASE_URL are not wired into the retrieval-worker yet; unset them to use the embedded indexes',
    );
  }
  const embedder = new HashingEmbedder();
  const [lexical, vector] = await Promise.all([
    EmbeddedLexicalBackend.open({ dataDir: join(config.DATA_DIR, 'bm25'), bm25: { k1: config.BM25_K1, b: config.BM25_B } }),
    EmbeddedVectorBackend.open({ dataDir: join(config.DATA_DIR, 'vectors'), dimensions: embedder.dimensions }),
  ]);
  return { lexical, vector, embedder, indexesShared: false };
}
