import type { Embedder, HybridRetriever, HybridRetrieverOptions, Indexer } from '@hopline/retrieval';
import {
  EmbeddedLexicalBackend,
  EmbeddedVectorBackend,
  HashingEmbedder,
  createDeadlineGuard,
  createHybridRetriever,
  createIndexer,
} from '@hopline/retrieval';

export interface EvalRetrievalStack {
  lexical: EmbeddedLexicalBackend;
  vector: EmbeddedVectorBackend;
  embedder: Embedder;
  indexer: Indexer;
  retriever: HybridRetriever;
  close(): Promise<void>;
}

/**
 * The embedded retrieval path the eval measures: in-memory BM25 and vector indexes, the offline
 * hashing embedder unless another is given, and deadline-only guards (there is no remote
 * dependency whose health a breaker could track).
 */
export async function openEvalRetrievalStack(
  options: { embedder?: Embedder; hybrid?: Partial<HybridRetrieverOptions> } = {},
): Promise<EvalRetrievalStack> {
  const embedder = options.embedder ?? new HashingEmbedder();
  const lexical = await EmbeddedLexicalBackend.open({ durable: false });
  const vector = await EmbeddedVectorBackend.open({ dimensions: embedder.dimensions, durable: false });
  const indexer = createIndexer({ lexical, vector, embedder });
  const guard = createDeadlineGuard();
  const retriever = createHybridRetriever({
    lexical,
    vector,
    embedder,
    lexicalGuard: guard,
    vectorGuard: guard,
    ...(options.hybrid ? { options: options.hybrid } : {}),
  });
  return {
    lexical,
    vector,
    embedder,
    indexer,
    retriever,
    async close() {
      await Promise.all([lexical.close(), vector.close()]);
    },
  };
}
