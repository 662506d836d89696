import type { DocumentKey, DocumentState, IndexedChunk, VersionedDocumentKey } from '../backends/types.js';
import type { EntityGraph } from './entity-graph.js';

/** A document's record as a shared index holds it: its newest version, whether that is a delete, its chunks. */
export interface DocumentChange {
  doc: VersionedDocumentKey;
  deleted: boolean;
  chunks: number;
}

/**
 * A lexical index every worker shares (Elasticsearch) as the entity graph reads it: each chunk
 * is stored with its entity keys, and each document has a record stamped with its write time.
 */
export interface SharedGraphSource {
  readonly name: string;
  /** Records written at or after `sinceMs` by their writer's clock (every record when undefined), a page at a time. */
  documentChanges(sinceMs: number | undefined, signal?: AbortSignal): AsyncIterable<DocumentChange[]>;
  /** The chunks of these document versions, with the entity keys they were written with. */
  readChunks(docs: readonly VersionedDocumentKey[], signal?: AbortSignal): Promise<IndexedChunk[]>;
  /** The current records of these documents, in their order (read in real time, not from search). */
  documentStates(keys: readonly DocumentKey[], signal?: AbortSignal): Promise<Array<DocumentState | undefined>>;
}

export interface SharedGraphSyncOptions {
  /**
   * How far before the previous sync's start each read of changes starts: covers writers'
   * clocks behind this one and records that became searchable after the read (a refresh).
   */
  overlapMs?: number;
}

/** What one sync did. */
export interface SyncReport {
  /** Documents linked at a new version or unlinked. */
  applied: number;
  /** Documents whose record is newer than the chunks searchable yet: tried again next sync. */
  waiting: number;
}

// Writers' clocks within a few seconds of each other, and Elasticsearch's 1 s refresh, with room.
const DEFAULT_OVERLAP_MS = 30_000;

const keyOf = (doc: DocumentKey) => JSON.stringify([doc.tenantId, doc.kbId, doc.docId]);

/**
 * Keeps an entity graph in step with a lexical index every worker writes (Elasticsearch, where
 * the workers split the ingest stream, so no worker sees every write): the first sync links
 * every live document from the chunks and entity keys stored in the index (a restart rebuilds
 * the graph from there), and each later one reads the records written since the previous sync
 * began (less an overlap) and relinks only the documents whose version differs from the graph's.
 * The worker's own writes reach its graph at once (`graphIndexedLexical`); other workers' by
 * the next sync. A record whose chunks are not all searchable yet is read again by the next
 * sync, from its current state, so a later version or delete wins.
 */
export function createSharedGraphSync(
  graph: EntityGraph,
  source: SharedGraphSource,
  options: SharedGraphSyncOptions = {},
): { sync(signal?: AbortSignal): Promise<SyncReport> } {
  const overlapMs = options.overlapMs ?? DEFAULT_OVERLAP_MS;
  let previousStart: number | undefined;
  let waiting = new Map<string, DocumentKey>();

  /** Links or unlinks what the records say; returns the documents whose chunks are not all searchable. */
  async function apply(changes: readonly DocumentChange[], signal?: AbortSignal) {
    let applied = 0;
    const toRead: DocumentChange[] = [];
    for (const change of changes) {
      const linked = graph.documentVersion(change.doc);
      if (change.deleted) {
        if (linked !== undefined && linked <= change.doc.version) {
          graph.removeDocument(change.doc);
          applied += 1;
        }
      } else if (linked === undefined || linked < change.doc.version) toRead.push(change);
    }
    const incomplete: DocumentChange[] = [];
    if (toRead.length === 0) return { applied, incomplete };
    const chunks = new Map<string, IndexedChunk[]>();
    for (const chunk of await source.readChunks(
      toRead.map((change) => change.doc),
      signal,
    )) {
      const key = keyOf(chunk);
      chunks.set(key, [...(chunks.get(key) ?? []), chunk]);
    }
    for (const change of toRead) {
      const read = chunks.get(keyOf(change.doc)) ?? [];
      // A local write may have linked a newer version while the chunks were read.
      if ((graph.documentVersion(change.doc) ?? -1) >= change.doc.version) continue;
      if (read.length !== change.chunks) {
        incomplete.push(change);
        continue;
      }
      graph.putDocument(change.doc, read);
      applied += 1;
    }
    return { applied, incomplete };
  }

  return {
    async sync(signal) {
      const started = Date.now();
      let applied = 0;
      const stillWaiting = new Map<string, DocumentKey>();
      if (waiting.size > 0) {
        const keys = [...waiting.values()];
        const states = await source.documentStates(keys, signal);
        const changes = keys.flatMap((doc, at) => {
          const state = states[at];
          return state
            ? [{ doc: { ...doc, version: state.version }, deleted: state.deleted, chunks: state.chunks }]
            : [];
        });
        const result = await apply(changes, signal);
        applied += result.applied;
        for (const change of result.incomplete) stillWaiting.set(keyOf(change.doc), change.doc);
      }
      const since = previousStart === undefined ? undefined : previousStart - overlapMs;
      for await (const page of source.documentChanges(since, signal)) {
        const result = await apply(page, signal);
        applied += result.applied;
        for (const change of result.incomplete) stillWaiting.set(keyOf(change.doc), change.doc);
      }
      previousStart = started;
      waiting = stillWaiting;
      return { applied, waiting: waiting.size };
    },
  };
}
