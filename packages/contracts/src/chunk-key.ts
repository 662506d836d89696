/**
 * The key under which candidate chunks from several lists (retrieval paths, the entity graph, a
 * question's hops) are merged: the dedupe key within its knowledge base. Document ids, and so
 * chunk ids, are unique only within one (hr/handbook.md and it/handbook.md, each in a knowledge
 * base of its own, are both `handbook#0`), and a scope may name several.
 */
export function chunkMergeKey(kbId: string, dedupeKey: string): string {
  return `${kbId}\u0000${dedupeKey}`;
}
