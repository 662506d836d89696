import { join } from 'node:path';
import type { Tokenizer } from '@hopline/text';
import { createTokenizer } from '@hopline/text';
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
import type { IndexSnapshot } from '../storage/store-snapshot.js';
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

/** BM25 over the in-process index, persisted as a replayable write log in `dataDir`. */
export class EmbeddedLexicalBackend implements LexicalBackend {
  readonly name = 'bm25';

  private constructor(
    private readonly index: Bm25Index,
    private readonly chunks: Map<string, IndexedChunk>,
    private readonly store: VersionedDocumentStore<IndexedChunk>,
    private readonly tokenizer: Tokenizer,
  ) {}

  static async open(options: EmbeddedLexicalBackendOptions = {}): Promise<EmbeddedLexicalBackend> {
    const tokenizer = options.tokenizer ?? createTokenizer();
    const titleWeight = options.titleWeight ?? 2;
    let index = new Bm25Index(options.bm25);
    // A snapshot whose terms another tokenizer version made is not loaded: its documents are
    // indexed again as they are restored, and the next snapshot stores the new terms.
    let reindex = false;
    const chunks = new Map<string, IndexedChunk>();
    const snapshot: IndexSnapshot = {
      save: (dir) => index.save(dir, tokenizer.version),
      async load(dir) {
        const loaded = await Bm25Index.load(dir, tokenizer.version, options.bm25);
        if (loaded) index = loaded;
        else reindex = true;
      },
    };
    const store = await VersionedDocumentStore.open<IndexedChunk>({
      ...(options.dataDir === undefined
        ? {}
        : {
            files: {
              log: join(options.dataDir, LEXICAL_LOG_FILE),
              snapshot: join(options.dataDir, LEXICAL_SNAPSHOT_DIR),
              index: snapshot,
              ...(options.snapshotAfter === undefined ? {} : { snapshotAfter: options.snapshotAfter }),
            },
          }),
      durable: options.durable ?? true,
      codec: {
        encode: (chunk) => chunk,
        decode: (value, _, verified) => (verified.entries ? (value as IndexedChunk) : indexedChunkSchema.parse(value)),
      },
      listener: {
        restored(doc, items) {
          const partition = partitionKey(doc.tenantId, doc.kbId);
          for (const chunk of items) {
            if (reindex) index.add(partition, chunk.chunkId, lexicalTerms(tokenizer, chunk, titleWeight));
            chunks.set(chunkKey(partition, chunk.chunkId), chunk);
          }
        },
        added(doc, items) {
          const partition = partitionKey(doc.tenantId, doc.kbId);
          for (const chunk of items) {
            index.add(partition, chunk.chunkId, lexicalTerms(tokenizer, chunk, titleWeight));
            chunks.set(chunkKey(partition, chunk.chunkId), chunk);
          }
        },
        removed(doc, items) {
          const partition = partitionKey(doc.tenantId, doc.kbId);
          for (const chunk of items) {
            index.remove(partition, chunk.chunkId);
            chunks.delete(chunkKey(partition, chunk.chunkId));
          }
        },
      },
    });
    return new EmbeddedLexicalBackend(index, chunks, store, tokenizer);
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
      docIds && ((partition, key) => docIds.has(this.chunks.get(chunkKey(partition, key))?.docId ?? '')),
    );
    return hits.map((hit) => ({
      chunk: this.chunks.get(chunkKey(hit.partition, hit.key)) as IndexedChunk,
      score: hit.score,
    }));
  }

  upsertDocument(doc: VersionedDocumentKey, items: readonly IndexedChunk[]): Promise<WriteOutcome> {
    return this.store.upsert(doc, items);
  }

  deleteDocument(ref: VersionedDocumentKey): Promise<WriteOutcome> {
    return this.store.delete(ref);
  }

  writeDocuments(writes: readonly DocumentWrite<IndexedChunk>[]): Promise<WriteOutcome[]> {
    return this.store.write(writes);
  }

  async documentState(key: DocumentKey): Promise<DocumentState | undefined> {
    return this.store.state(key);
  }

  /** Writes logged since the last snapshot: what a restart replays. */
  get tail(): number {
    return this.store.tail;
  }

  async readDocuments(tenantId: string, kbId: string): Promise<Array<StoredDocument<IndexedChunk>>> {
    return this.store.documentsOf(tenantId, kbId);
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
