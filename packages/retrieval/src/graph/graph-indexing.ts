import type {
  DocumentWrite,
  IndexedChunk,
  LexicalBackend,
  VersionedDocumentKey,
  WriteOutcome,
  WriteResult,
} from '../backends/types.js';
import type { EntityGraph, LinkedChunk } from './entity-graph.js';

/**
 * The entity graph kept in step with a lexical index that stores whole chunks (the embedded one,
 * and Elasticsearch, where other workers' writes reach the graph through `createSharedGraphSync`):
 * each chunk is written with its entity keys (`IndexedChunk.entities`), so the keys live in the
 * index's own log and snapshot; a write the index applied is then applied to the graph (a new
 * version replaces the document's chunks, a delete removes them), and one it refused as stale or
 * already there changes nothing. Every write reaches the index this way, the start-up repair's
 * included, so the graph holds what the index holds.
 */
export function graphIndexedLexical(lexical: LexicalBackend, graph: EntityGraph): LexicalBackend {
  const withEntities = (items: readonly IndexedChunk[]) =>
    items.map((chunk) => (chunk.entities ? chunk : { ...chunk, entities: [...graph.entitiesOf(chunk)] }));
  const applyToGraph = (write: DocumentWrite<IndexedChunk>, outcome: WriteResult) => {
    if (outcome !== 'applied') return;
    if (write.op === 'upsert') graph.putDocument(write.doc, write.items);
    else graph.removeDocument(write.doc);
  };

  return {
    name: lexical.name,
    search: (request, signal) => lexical.search(request, signal),
    documentState: (key, signal) => lexical.documentState(key, signal),
    countChunks: (signal) => lexical.countChunks(signal),
    ...(lexical.documentStates ? { documentStates: lexical.documentStates.bind(lexical) } : {}),
    ...(lexical.readDocuments ? { readDocuments: lexical.readDocuments.bind(lexical) } : {}),
    close: () => lexical.close(),
    async upsertDocument(doc: VersionedDocumentKey, items: readonly IndexedChunk[], signal?: AbortSignal) {
      const chunks = withEntities(items);
      const outcome: WriteOutcome = await lexical.upsertDocument(doc, chunks, signal);
      applyToGraph({ op: 'upsert', doc, items: chunks }, outcome);
      return outcome;
    },
    async deleteDocument(ref: VersionedDocumentKey, signal?: AbortSignal) {
      const outcome = await lexical.deleteDocument(ref, signal);
      applyToGraph({ op: 'delete', doc: ref }, outcome);
      return outcome;
    },
    async writeDocuments(writes: readonly DocumentWrite<IndexedChunk>[], signal?: AbortSignal) {
      const annotated = writes.map((write) =>
        write.op === 'upsert' ? { ...write, items: withEntities(write.items) } : write,
      );
      const results = await lexical.writeDocuments(annotated, signal);
      annotated.forEach((write, at) => applyToGraph(write, results[at] as WriteResult));
      return results;
    },
  };
}

/** A chunk with the entity keys it was written with; none when it was written before the graph existed. */
export interface UnlinkedChunk {
  readonly entities: readonly string[] | undefined;
  readonly chunk: IndexedChunk;
}

/**
 * An index that keeps each chunk's entity keys beside it (the embedded one): the graph links its
 * live documents without reading a chunk, which a snapshot may hold unparsed until a search
 * returns it.
 */
export interface LinkedDocumentSource {
  linkedDocuments(
    tenantId: string,
    kbId: string,
  ): Array<{ doc: VersionedDocumentKey; chunks: readonly UnlinkedChunk[] }>;
}

/**
 * Loads the graph from what the index stores, at start: every live document's chunks with the
 * entity keys they were written with, so a restart relinks them without reading any text again
 * (only chunks written before the graph existed have their entities extracted now). Needs an
 * index that can list its documents, with their entity keys (`LinkedDocumentSource`) or whole.
 */
export async function loadEntityGraph(
  graph: EntityGraph,
  lexical: LexicalBackend & Partial<LinkedDocumentSource>,
): Promise<void> {
  const { readDocuments, linkedDocuments } = lexical;
  if (linkedDocuments) {
    // The item itself where it has its keys: its chunk is read only if a walk returns it.
    const linked = (item: UnlinkedChunk): LinkedChunk =>
      item.entities ? (item as LinkedChunk) : { entities: graph.entitiesOf(item.chunk), chunk: item.chunk };
    for (const kb of await lexical.countChunks())
      for (const { doc, chunks } of linkedDocuments.call(lexical, kb.tenantId, kb.kbId))
        graph.linkDocument(doc, chunks.map(linked));
    return;
  }
  if (!readDocuments) throw new Error(`the ${lexical.name} index cannot list its documents to load the entity graph`);
  for (const kb of await lexical.countChunks()) {
    for (const stored of await readDocuments.call(lexical, kb.tenantId, kb.kbId))
      if (!stored.deleted) graph.putDocument(stored.doc, stored.items);
  }
}
