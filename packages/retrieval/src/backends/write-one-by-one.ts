import type { DocumentWrite, VersionedDocumentKey, WriteOutcome } from './types.js';

interface SingleWrites<Item> {
  upsertDocument(doc: VersionedDocumentKey, items: readonly Item[], signal?: AbortSignal): Promise<WriteOutcome>;
  deleteDocument(ref: VersionedDocumentKey, signal?: AbortSignal): Promise<WriteOutcome>;
}

/**
 * A batch as a series of single writes, in order: the remote backends' versioned writes read
 * and write a document record per document, so their batch is that many writes (each chunk
 * write of a document is already one bulk request).
 */
export async function writeOneByOne<Item>(
  backend: SingleWrites<Item>,
  writes: readonly DocumentWrite<Item>[],
  signal?: AbortSignal,
): Promise<WriteOutcome[]> {
  const outcomes: WriteOutcome[] = [];
  for (const write of writes) {
    outcomes.push(
      write.op === 'upsert'
        ? await backend.upsertDocument(write.doc, write.items, signal)
        : await backend.deleteDocument(write.doc, signal),
    );
  }
  return outcomes;
}
