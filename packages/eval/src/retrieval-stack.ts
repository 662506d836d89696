import type {
  EmbeddedLexicalBackendOptions,
  Embedder,
  HybridRetriever,
  HybridRetrieverOptions,
  Indexer,
} from '@hopline/retrieval';
import {
  EmbeddedLexicalBackend,
  EmbeddedVectorBackend,
  HashingEmbedder,
  createDeadlineGuard,
  createHybridRetriever,
  createIndexer,
  hybridOptionsFor,
} from '@hopline/retrieval';

export interface EvalRetrievalStack {
  lexical: EmbeddedLexicalBackend;
  vector: EmbeddedVectorBackend;
  embedder: Embedder;
  indexer: Indexer;
  retriever: HybridRetriever;
  hybridOptions: HybridRetrieverOptions;
  close(): Promise<void>;
}

/**
 * The embedded retrieval path the eval measures: in-memory BM25 and vector indexes, the offline
 * hashing embedder unless another is given, fused as that embedder declares unless `hybrid`
 * says otherwise, and deadline-only guards (there is no remote dependency whose health a
 * breaker could track).
 */
export async function openEvalRetrievalStack(
  options: {
    embedder?: Embedder;
    hybrid?: Partial<HybridRetrieverOptions>;
    lexical?: Pick<EmbeddedLexicalBackendOptions, 'bm25' | 'titleWeight' | 'tokenizer'>;
  } = {},
): Promise<EvalRetrievalStack> {
  const embedder = options.embedder ?? new HashingEmbedder();
  const lexical = await EmbeddedLexicalBackend.open({ ...options.lexical, durable: false });
  const vector = await EmbeddedVectorBackend.open({ dimensions: embedder.dimensions, durable: false });
  const indexer = createIndexer({ lexical, vector, embedder });
  const guard = createDeadlineGuard();
  const hybridOptions = hybridOptionsFor(embedder, options.hybrid);
  const retriever = createHybridRetriever({
    lexical,
    vector,
    embedder,
    lexicalGuard: guard,
    vectorGuard: guard,
    options: hybridOptions,
  });
  return {
    lexical,
    vector,
    embedder,
    indexer,
    retriever,
    hybridOptions,
    async close() {
      await Promise.all([lexical.close(), vector.close()]);
    },
  };
}
