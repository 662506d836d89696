import type {
  EmbeddedLexicalBackendOptions,
  Embedder,
  EntityGraph,
  HybridRetrieverOptions,
  Indexer,
  SeededRetriever,
} from '@hopline/retrieval';
import {
  createEntityGraph,
  EmbeddedLexicalBackend,
  EmbeddedVectorBackend,
  HashingEmbedder,
  createDeadlineGuard,
  createHybridRetriever,
  createIndexer,
  graphIndexedLexical,
  hybridOptionsFor,
  withEntityGraph,
} from '@hopline/retrieval';
import { chunkEntities } from '@hopline/text';

export interface EvalRetrievalStack {
  lexical: EmbeddedLexicalBackend;
  vector: EmbeddedVectorBackend;
  embedder: Embedder;
  indexer: Indexer;
  /** Hybrid retrieval and the entity graph its seeds walk, as an embedded retrieval-worker serves it. */
  retriever: SeededRetriever;
  /** The entity–chunk graph of every chunk indexed, kept as the worker keeps it. */
  graph: EntityGraph;
  hybridOptions: HybridRetrieverOptions;
  close(): Promise<void>;
}

/**
 * The embedded retrieval path the eval measures: in-memory BM25 and vector indexes, the offline
 * hashing embedder unless another is given, fused as that embedder declares unless `hybrid`
 * says otherwise, and deadline-only guards (there is no remote dependency whose health a
 * breaker could track). The entity graph is kept beside the lexical index and walked from a
 * retrieval's seeds, as the retrieval-worker does over its embedded indexes: the `entityGraph`
 * switch (the loop sends no seeds) is what takes it out of a run.
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
  const graph = createEntityGraph(chunkEntities);
  const indexer = createIndexer({ lexical: graphIndexedLexical(lexical, graph), vector, embedder });
  const guard = createDeadlineGuard();
  const hybridOptions = hybridOptionsFor(embedder, options.hybrid);
  const hybrid = createHybridRetriever({
    lexical,
    vector,
    embedder,
    lexicalGuard: guard,
    vectorGuard: guard,
    options: hybridOptions,
  });
  const retriever = withEntityGraph(hybrid, graph);
  return {
    lexical,
    vector,
    embedder,
    indexer,
    retriever,
    graph,
    hybridOptions,
    async close() {
      await Promise.all([lexical.close(), vector.close()]);
    },
  };
}
