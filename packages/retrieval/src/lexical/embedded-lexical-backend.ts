import { join } from 'node:path';
import type { Tokenizer } from '@hopline/text';
import { createTokenizer } from '@hopline/text';
import { z } from 'zod';
import { assertScope } from '../backends/scope.js';
import { indexedChunkSchema } from '../backends/chunk-schema.js';
import type {
  DocumentKey,
  DocumentState,
  DocumentWrite,
  IndexedChunk,
  KbChunkCount,
  LexicalBackend,
  LexicalSearchRequest,
  ScoredChunk,
  StoredDocument,
  VersionedDocumentKey,
  WriteOutcome,
} from '../backends/types.js';
import { partitionKey, scopePartitions, selectedDocIds } from '../backends/types.js';
import type { LinkedDocumentSource, UnlinkedChunk } from '../graph/graph-indexing.js';
import type { IndexSnapshot } from '../storage/store-snapshot.js';
import type { ItemCodec } from '../storage/versioned-document-store.js';
import { VersionedDocumentStore } from '../storage/versioned-document-store.js';
import type { Bm25Parameters } from './bm25-index.js';
import { Bm25Index } from './bm25-index.js';

export interface EmbeddedLexicalBackendOptions {
  /** Folder the index persists to; without it the index lives in memory only. */
  dataDir?: string;
  /** Flush every write to disk before acknowledging it (default true). */
  durable?: boolean;
  tokenizer?: Tokenizer;
  bm25?: Partial<Bm25Parameters>;
  /**
   * How many times the title counts in a chunk's terms (default 2). Titles name the entity a
   * passage is about, which is what questions ask by; counting them twice is BM25F's field
   * boost in its simplest form.
   */
  titleWeight?: number;
  /** Log entries after which a snapshot is taken (default: see `StoreFiles.snapshotAfter`). */
  snapshotAfter?: number;
  /** See `StoreFiles.onSnapshotFailed`. */
  onSnapshotFailed?: (error: unknown) => void;
}

export const LEXICAL_LOG_FILE = 'lexical.log.jsonl';
export const LEXICAL_SNAPSHOT_DIR = 'lexical.snapshot';

/** The lexical terms a chunk is indexed under: title (weighted) and its lexical window. */
export function lexicalTerms(tokenizer: Tokenizer, chunk: IndexedChunk, titleWeight: number): readonly string[] {
  const body = tokenizer.tokenize(chunk.lexicalText ?? chunk.text);
  if (titleWeight <= 0 || !chunk.title) return body;
  const title = tokenizer.tokenize(chunk.title);
  const terms = [...body];
  for (let i = 0; i < titleWeight; i++) terms.push(...title);
  return terms;
}

/**
 * A chunk as the lexical index keeps it. A snapshot (format 5) holds the chunk as JSON bytes in
 * its item blobs and its entity keys in the entry: a start links the entity graph from the keys
 * and parses a chunk only when it is first read (a hit, a repair), rather than parsing the whole
 * corpus before it is ready. Its id and document are the entry's, known without parsing.
 */
interface LexicalItem extends UnlinkedChunk {
  readonly chunkId: string;
  readonly docId: string;
}

const wholeItem = (chunk: IndexedChunk): LexicalItem => ({
  chunkId: chunk.chunkId,
  docId: chunk.docId,
  entities: chunk.entities,
  chunk,
});

class SnapshotChunk implements LexicalItem {
  private parsed: IndexedChunk | undefined;

  constructor(
    readonly chunkId: string,
    readonly docId: string,
    readonly entities: readonly string[] | undefined,
    private readonly itemBlobs: Buffer,
    private readonly offset: number,
    private readonly length: number,
  ) {}

  get chunk(): IndexedChunk {
    if (!this.parsed) {
      const chunk = JSON.parse(this.bytes().toString('utf8')) as IndexedChunk;
      if (this.entities) chunk.entities = this.entities;
      this.parsed = chunk;
    }
    return this.parsed;
  }

  /** The chunk as the snapshot holds it (without its entity keys), for the next snapshot to keep as it is. */
  bytes(): Buffer {
    return this.itemBlobs.subarray(this.offset, this.offset + this.length);
  }
}

// A log line, and an entry of a snapshot of format 4 or older, hold the chunk whole; a format 5
// entry [chunk id, offset and length of its bytes in the item blobs, entity keys or null].
const storedSchema = z.union([
  z.tuple([
    z.string().min(1),
    z.number().int().nonnegative(),
    z.number().int().nonnegative(),
    z.array(z.string()).nullable(),
  ]),
  indexedChunkSchema,
]);
type Stored = z.infer<typeof storedSchema>;

const lexicalCodec: ItemCodec<LexicalItem> = {
  encode: (item) => item.chunk,
  encodeForSnapshot(item, itemBlobs) {
    let bytes: Buffer;
    if (item instanceof SnapshotChunk) bytes = item.bytes();
    else {
      const { entities: _, ...chunk } = item.chunk;
      bytes = Buffer.from(JSON.stringify(chunk));
    }
    const [offset, length] = itemBlobs.add(bytes);
    return [item.chunkId, offset, length, item.entities ?? null];
  },
  decode(value, itemBlobs, verified, doc) {
    const stored = verified.entries ? (value as Stored) : storedSchema.parse(value);
    if (!Array.isArray(stored)) return wholeItem(stored);
    const [chunkId, offset, length, entities] = stored;
    if (offset + length > itemBlobs.byteLength) throw new Error(`chunk ${chunkId} does not fit the item bytes`);
    if (verified.items) return new SnapshotChunk(chunkId, doc.docId, entities ?? undefined, itemBlobs, offset, length);
    // Bytes no checksum vouches for are validated now.
    const chunk = indexedChunkSchema.parse(JSON.parse(itemBlobs.toString('utf8', offset, offset + length)));
    return wholeItem(entities ? { ...chunk, entities } : chunk);
  },
};

/** BM25 over the in-process index, persisted as a replayable write log in `dataDir`. */
export class EmbeddedLexicalBackend implements LexicalBackend, LinkedDocumentSource {
  readonly name = 'bm25';

  private constructor(
    private readonly index: Bm25Index,
    /** The live items by partition and chunk id: a hit's chunk is read from its item when returned. */
    private readonly items: Map<string, LexicalItem>,
    private readonly store: VersionedDocumentStore<LexicalItem>,
    private readonly tokenizer: Tokenizer,
  ) {}

  static async open(options: EmbeddedLexicalBackendOptions = {}): Promise<EmbeddedLexicalBackend> {
    const tokenizer = options.tokenizer ?? createTokenizer();
    const titleWeight = options.titleWeight ?? 2;
    let index = new Bm25Index(options.bm25);
    // A snapshot whose terms another tokenizer version made is not loaded: its documents are
    // indexed again as they are restored, and the next snapshot stores the new terms.
    let reindex = false;
    const items = new Map<string, LexicalItem>();
    const snapshot: IndexSnapshot = {
      save: (dir) => index.save(dir, tokenizer.version),
      async load(dir) {
        const loaded = await Bm25Index.load(dir, tokenizer.version, options.bm25);
        if (loaded) index = loaded;
        else reindex = true;
        return !reindex;
      },
    };
    const store = await VersionedDocumentStore.open<LexicalItem>({
      ...(options.dataDir === undefined
        ? {}
        : {
            files: {
              log: join(options.dataDir, LEXICAL_LOG_FILE),
              snapshot: join(options.dataDir, LEXICAL_SNAPSHOT_DIR),
              index: snapshot,
              ...(options.snapshotAfter === undefined ? {} : { snapshotAfter: options.snapshotAfter }),
              ...(options.onSnapshotFailed === undefined ? {} : { onSnapshotFailed: options.onSnapshotFailed }),
            },
          }),
      durable: options.durable ?? true,
      codec: lexicalCodec,
      listener: {
        restored(doc, restoredItems) {
          const partition = partitionKey(doc.tenantId, doc.kbId);
          for (const item of restoredItems) {
            if (reindex) index.add(partition, item.chunkId, lexicalTerms(tokenizer, item.chunk, titleWeight));
            items.set(chunkKey(partition, item.chunkId), item);
          }
        },
        added(doc, addedItems) {
          const partition = partitionKey(doc.tenantId, doc.kbId);
          for (const item of addedItems) {
            index.add(partition, item.chunkId, lexicalTerms(tokenizer, item.chunk, titleWeight));
            items.set(chunkKey(partition, item.chunkId), item);
          }
        },
        removed(doc, removedItems) {
          const partition = partitionKey(doc.tenantId, doc.kbId);
          for (const item of removedItems) {
            index.remove(partition, item.chunkId);
            items.delete(chunkKey(partition, item.chunkId));
          }
        },
      },
    });
    return new EmbeddedLexicalBackend(index, items, store, tokenizer);
  }

  /** Postings read by all searches so far. */
  get stats(): { queries: number; postingsTouched: number } {
    return this.index.stats;
  }

  async search(request: LexicalSearchRequest, signal: AbortSignal): Promise<ScoredChunk[]> {
    assertScope(request.scope);
    signal.throwIfAborted();
    const docIds = selectedDocIds(request.scope);
    const { hits } = this.index.search(
      scopePartitions(request.scope),
      this.tokenizer.tokenize(request.query),
      request.limit,
      docIds && ((partition, key) => docIds.has(this.items.get(chunkKey(partition, key))?.docId ?? '')),
    );
    return hits.map((hit) => ({
      chunk: (this.items.get(chunkKey(hit.partition, hit.key)) as LexicalItem).chunk,
      score: hit.score,
    }));
  }

  upsertDocument(doc: VersionedDocumentKey, chunks: readonly IndexedChunk[]): Promise<WriteOutcome> {
    return this.store.upsert(doc, chunks.map(wholeItem));
  }

  deleteDocument(ref: VersionedDocumentKey): Promise<WriteOutcome> {
    return this.store.delete(ref);
  }

  writeDocuments(writes: readonly DocumentWrite<IndexedChunk>[]): Promise<WriteOutcome[]> {
    return this.store.write(
      writes.map((write) => (write.op === 'upsert' ? { ...write, items: write.items.map(wholeItem) } : write)),
    );
  }

  async documentState(key: DocumentKey): Promise<DocumentState | undefined> {
    return this.store.state(key);
  }

  /** Writes logged since the last snapshot: what a restart replays. */
  get tail(): number {
    return this.store.tail;
  }

  async readDocuments(tenantId: string, kbId: string): Promise<Array<StoredDocument<IndexedChunk>>> {
    return this.store
      .documentsOf(tenantId, kbId)
      .map((stored) => ({ ...stored, items: stored.items.map((item) => item.chunk) }));
  }

  linkedDocuments(
    tenantId: string,
    kbId: string,
  ): Array<{ doc: VersionedDocumentKey; chunks: readonly UnlinkedChunk[] }> {
    const linked: Array<{ doc: VersionedDocumentKey; chunks: readonly UnlinkedChunk[] }> = [];
    for (const stored of this.store.documentsOf(tenantId, kbId))
      if (!stored.deleted) linked.push({ doc: stored.doc, chunks: stored.items });
    return linked;
  }

  async countChunks(): Promise<KbChunkCount[]> {
    return this.store.counts();
  }

  close(): Promise<void> {
    return this.store.close();
  }
}

function chunkKey(partition: string, chunkId: string): string {
  return `${partition}\u0000${chunkId}`;
}
