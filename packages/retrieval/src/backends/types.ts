/**
 * The ports the hybrid retriever and the indexer talk to. The embedded indexes implement them
 * in-process; Elasticsearch and Milvus adapters implement the same contracts remotely.
 */

/** What a caller may read: one tenant and some of its knowledge bases, applied as a hard filter. */
export interface SearchScope {
  tenantId: string;
  kbIds: readonly string[];
  /** The documents selected inside those kbs; absent or empty means every document. */
  docIds?: readonly string[];
}

/** The selected document ids, or undefined when the scope selects every document. */
export function selectedDocIds(scope: SearchScope): ReadonlySet<string> | undefined {
  return scope.docIds && scope.docIds.length > 0 ? new Set(scope.docIds) : undefined;
}

export interface DocumentKey {
  tenantId: string;
  kbId: string;
  docId: string;
}

export interface VersionedDocumentKey extends DocumentKey {
  version: number;
}

export interface TextRange {
  start: number;
  end: number;
}

/** A chunk as the indexes store it: everything a retrieved `Chunk` needs, and nothing per-query. */
export interface IndexedChunk {
  chunkId: string;
  tenantId: string;
  kbId: string;
  docId: string;
  docVersion: number;
  title: string;
  text: string;
  /** Offsets [start, end) of `text` in the document. */
  span: TextRange;
  dedupeKey: string;
  /** ISO-8601 date from which the document applies; empty when unknown. */
  effectiveDate: string;
  sourceUri: string;
  /**
   * The longer window the lexical index reads for this chunk (see `chunking/chunker.ts`);
   * absent when it is the chunk's own text.
   */
  lexicalText?: string;
  /**
   * The entity keys the chunk names, written where an entity graph is kept (see
   * `graph/graph-indexing.ts`), so that a restart relinks the graph without reading the text again.
   */
  entities?: readonly string[];
}

export interface ScoredChunk {
  chunk: IndexedChunk;
  score: number;
}

export interface EmbeddedChunk {
  chunk: IndexedChunk;
  vector: Float32Array;
}

/**
 * How a versioned write ended: `applied` changed the index, `unchanged` found that exact version
 * already there (a redelivery), `stale` lost to a newer version or a newer delete.
 */
export type WriteOutcome = 'applied' | 'unchanged' | 'stale';

/** One write's result in a batch: its outcome, or the error that failed it alone (the others went on). */
export type WriteResult = WriteOutcome | Error;

export interface DocumentState {
  version: number;
  /** A tombstone: deleted up to and including `version`, so older upserts stay out. */
  deleted: boolean;
  chunks: number;
}

export interface KbChunkCount {
  tenantId: string;
  kbId: string;
  /** Live (not deleted) documents. */
  documents: number;
  chunks: number;
}

/** One write of a batch: a document's new version with its items, or a delete up to a version. */
export type DocumentWrite<Item> =
  { op: 'upsert'; doc: VersionedDocumentKey; items: readonly Item[] } | { op: 'delete'; doc: VersionedDocumentKey };

/** A document as a backend holds it: its version, whether that is a tombstone, and its items. */
export interface StoredDocument<Item> {
  doc: VersionedDocumentKey;
  deleted: boolean;
  items: readonly Item[];
}

interface VersionedBackend<Item> {
  /** Names the backend in degraded reasons, logs and consistency reports. */
  readonly name: string;
  /** Replaces every chunk of the document unless a newer version (or delete) is already there. */
  upsertDocument(doc: VersionedDocumentKey, items: readonly Item[], signal?: AbortSignal): Promise<WriteOutcome>;
  /** Deletes every version up to and including `ref.version`. */
  deleteDocument(ref: VersionedDocumentKey, signal?: AbortSignal): Promise<WriteOutcome>;
  /**
   * Applies the writes in order, with the same rules and outcomes as one call each, in as few
   * round trips or log flushes as the backend allows: the bulk ingestion path. A write the
   * backend refused on its own (a bulk item error) is its error; a failed request throws.
   */
  writeDocuments(writes: readonly DocumentWrite<Item>[], signal?: AbortSignal): Promise<WriteResult[]>;
  documentState(key: DocumentKey, signal?: AbortSignal): Promise<DocumentState | undefined>;
  /**
   * The states of many documents, in their order, in as few round trips as the backend allows:
   * what the indexer reads before a batch. A backend without it is asked one document at a time.
   */
  documentStates?(keys: readonly DocumentKey[], signal?: AbortSignal): Promise<Array<DocumentState | undefined>>;
  countChunks(signal?: AbortSignal): Promise<KbChunkCount[]>;
  /**
   * Every document of one kb with its items, tombstones included: what lets the start-up check
   * rebuild the side that is behind from the other. The embedded indexes have it; a remote
   * backend without it leaves a gap to be closed by ingesting again.
   */
  readDocuments?(tenantId: string, kbId: string): Promise<Array<StoredDocument<Item>>>;
  close(): Promise<void>;
}

export interface LexicalSearchRequest {
  scope: SearchScope;
  query: string;
  limit: number;
}

export interface LexicalBackend extends VersionedBackend<IndexedChunk> {
  search(request: LexicalSearchRequest, signal: AbortSignal): Promise<ScoredChunk[]>;
}

export interface VectorSearchRequest {
  scope: SearchScope;
  vector: Float32Array;
  limit: number;
}

export interface VectorBackend extends VersionedBackend<EmbeddedChunk> {
  readonly dimensions: number;
  search(request: VectorSearchRequest, signal: AbortSignal): Promise<ScoredChunk[]>;
  /**
   * Vectors searchable but not yet in their approximate index (the embedded index's flat
   * buffer, see adaptive-vector-index.ts): how far the graph is behind. Absent: never behind.
   */
  bufferedVectors?(): number;
}

/** The partition key of one tenant's knowledge base inside an embedded index. */
export function partitionKey(tenantId: string, kbId: string): string {
  return `${tenantId}\u0000${kbId}`;
}

export function scopePartitions(scope: SearchScope): string[] {
  return scope.kbIds.map((kbId) => partitionKey(scope.tenantId, kbId));
}
