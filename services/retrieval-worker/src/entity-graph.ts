import { chunkEntities } from '@hopline/reasoning';
import { createEntityGraph, graphIndexedLexical, loadEntityGraph } from '@hopline/retrieval';
import type { EntityGraph, LexicalBackend } from '@hopline/retrieval';

/** The entity graph a worker keeps beside its indexes, or why it keeps none. */
export type EntityGraphSupport = { graph: EntityGraph } | { reason: string };

/**
 * Why a worker over Elasticsearch keeps no graph: the graph must hold every chunk of a kb, and
 * workers over shared indexes split the ingest stream between them, so none sees them all.
 */
export const ELASTICSEARCH_KEEPS_NO_GRAPH =
  'the lexical index is Elasticsearch, and this deployment keeps no entity graph beside it (see docs/architecture.md, "The entity graph a hop expands through")';

/**
 * The entity graph over an embedded lexical index: loaded from the chunks it stores (with the
 * entity keys they were written with) and kept in step with every write through the returned
 * index, which the worker must use in place of the one given.
 */
export async function keepEntityGraph(
  lexical: LexicalBackend,
): Promise<{ lexical: LexicalBackend; entityGraph: EntityGraphSupport }> {
  const graph = createEntityGraph(chunkEntities);
  await loadEntityGraph(graph, lexical);
  return { lexical: graphIndexedLexical(lexical, graph), entityGraph: { graph } };
}
