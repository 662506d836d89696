import { createEntityGraph, createSharedGraphSync, graphIndexedLexical, loadEntityGraph } from '@hopline/retrieval';
import type { EntityGraph, LexicalBackend, SharedGraphSource } from '@hopline/retrieval';
import { chunkEntities } from '@hopline/text';

/** The entity graph a worker keeps beside its indexes, or why it keeps none. */
export type EntityGraphSupport = { graph: EntityGraph } | { reason: string };

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

/**
 * The entity graph over a lexical index every worker shares (Elasticsearch): each chunk is
 * written with its entity keys through the returned index, which also links this worker's own
 * writes at once; the graph is loaded from the index at start and, every `syncIntervalMs`,
 * relinks the documents other workers wrote since (see shared-graph-sync.ts). Closing the
 * returned index stops the syncs.
 */
export async function keepSharedEntityGraph(
  lexical: LexicalBackend & SharedGraphSource,
  options: {
    syncIntervalMs: number;
    log: Record<'info' | 'warn', (message: string, fields?: Record<string, unknown>) => void>;
  },
): Promise<{ lexical: LexicalBackend; entityGraph: EntityGraphSupport }> {
  const graph = createEntityGraph(chunkEntities);
  const { sync } = createSharedGraphSync(graph, lexical);
  await sync();
  let running: Promise<void> | undefined;
  // Said once when the reads start failing (Elasticsearch away) and once when they work again.
  let failing = false;
  const timer = setInterval(() => {
    running ??= sync()
      .then(
        () => {
          if (failing) options.log.info('entity graph: reading the writes of other workers again');
          failing = false;
        },
        (error: unknown) => {
          if (!failing)
            options.log.warn('entity graph: could not read the writes of other workers; trying again', { error });
          failing = true;
        },
      )
      .finally(() => (running = undefined));
  }, options.syncIntervalMs);
  timer.unref();
  const indexed = graphIndexedLexical(lexical, graph);
  return {
    lexical: {
      ...indexed,
      async close() {
        clearInterval(timer);
        await running;
        await indexed.close();
      },
    },
    entityGraph: { graph },
  };
}
