import type {
  EmbeddedLexicalBackendOptions,
  Embedder,
  HybridRetriever,
  HybridRetrieverOptions,
  Indexer,
} from '@hopline/retrieval';
import type { EntityGraph } from '@hopline/reasoning';
import { createEntityGraph } from '@hopline/reasoning';
import {
  chunkDocument,
  chunkFields,
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
  /**
   * The entity–chunk graph of every chunk indexed, built as the indexer chunks; only when asked
   * for, since the services have no graph yet and the default figures describe what they serve.
   */
  graph?: EntityGraph;
  hybridOptions: HybridRetrieverOptions;
  close(): Promise<void>;
}

/**
 * The embedded retrieval path the eval measures: in-memory BM25 and vector indexes, the offline
 * hashing embedder unless another is given, fused as that embedder declares unless `hybrid`
 * says otherwise, and deadline-only guards (there is no remote dependency whose health a
 * breaker could track). With `entityGraph` (an experiment the services do not run yet) an entity
 * graph is built from the same chunks the indexes get.
 */
export async function openEvalRetrievalStack(
  options: {
    embedder?: Embedder;
    hybrid?: Partial<HybridRetrieverOptions>;
    lexical?: Pick<EmbeddedLexicalBackendOptions, 'bm25' | 'titleWeight' | 'tokenizer'>;
    entityGraph?: boolean;
  } = {},
): Promise<EvalRetrievalStack> {
  const embedder = options.embedder ?? new HashingEmbedder();
  const lexical = await EmbeddedLexicalBackend.open({ ...options.lexical, durable: false });
  const vector = await EmbeddedVectorBackend.open({ dimensions: embedder.dimensions, durable: false });
  const graph = options.entityGraph ? createEntityGraph() : undefined;
  const indexer = createIndexer({
    lexical,
    vector,
    embedder,
    chunk: (document) => {
      const chunks = chunkDocument(document);
      if (graph) for (const chunk of chunks) graph.add(chunkFields(chunk));
      return chunks;
    },
  });
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
    ...(graph ? { graph } : {}),
    hybridOptions,
    async close() {
      await Promise.all([lexical.close(), vector.close()]);
    },
  };
}
