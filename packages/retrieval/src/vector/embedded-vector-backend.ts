import { join } from 'node:path';
import { ValidationError } from '@hopline/contracts';
import { z } from 'zod';
import { indexedChunkSchema } from '../backends/chunk-schema.js';
import { assertScope } from '../backends/scope.js';
import type {
  DocumentKey,
  DocumentState,
  DocumentWrite,
  EmbeddedChunk,
  IndexedChunk,
  KbChunkCount,
  ScoredChunk,
  StoredDocument,
  VectorBackend,
  VectorSearchRequest,
  VersionedDocumentKey,
  WriteOutcome,
} from '../backends/types.js';
import { partitionKey, scopePartitions, selectedDocIds } from '../backends/types.js';
import { readBlob } from '../storage/snapshot-blobs.js';
import type { IndexSnapshot } from '../storage/store-snapshot.js';
import type { ItemCodec } from '../storage/versioned-document-store.js';
import { VersionedDocumentStore } from '../storage/versioned-document-store.js';
import { TopK } from '../util/top-k.js';
import { AdaptiveVectorIndex } from './adaptive-vector-index.js';
import { checkDimensions } from './flat-vector-index.js';
import type { VectorIndex } from './vector-index.js';
import { isPersistent } from './vector-index.js';

export interface EmbeddedVectorBackendOptions {
  dimensions: number;
  /** Folder the index persists to; without it the index lives in memory only. */
  dataDir?: string;
  /** Flush every write to disk before acknowledging it (default true). */
  durable?: boolean;
  /** Builds the nearest-neighbour index (default: flat scan, then HNSW per large partition). */
  createIndex?: (dimensions: number) => VectorIndex;
  /** Log entries after which a snapshot is taken (default: see `StoreFiles.snapshotAfter`). */
  snapshotAfter?: number;
}

export const VECTOR_LOG_FILE = 'vector.log.jsonl';
export const VECTOR_SNAPSHOT_DIR = 'vector.snapshot';

// A log line holds the vector in base64; a snapshot, as bytes in its item blobs (no text to
// decode at start-up), named by [offset, bytes].
const storedSchema = z.object({
  chunk: indexedChunkSchema,
  vector: z.union([z.string(), z.tuple([z.number().int().nonnegative(), z.number().int().nonnegative()])]),
});

function vectorCodec(dimensions: number): ItemCodec<EmbeddedChunk> {
  return {
    encode: ({ chunk, vector }) => ({
      chunk,
      vector: Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString('base64'),
    }),
    encodeForSnapshot: ({ chunk, vector }, itemBlobs) => ({ chunk, vector: itemBlobs.add(vector) }),
    decode(value, itemBlobs, verified) {
      const stored = verified ? (value as z.infer<typeof storedSchema>) : storedSchema.parse(value);
      let vector: Float32Array;
      if (typeof stored.vector === 'string') {
        const bytes = Buffer.from(stored.vector, 'base64');
        // Copy into an aligned buffer: a Float32Array view needs a 4-byte aligned offset.
        vector = new Float32Array(bytes.byteLength / 4);
        new Uint8Array(vector.buffer).set(bytes);
      } else vector = readBlob(itemBlobs, stored.vector, Float32Array);
      checkDimensions(vector, dimensions);
      return { chunk: stored.chunk, vector };
    },
  };
}

/** Vector search over an in-process index, persisted as a replayable write log in `dataDir`. */
export class EmbeddedVectorBackend implements VectorBackend {
  readonly name = 'vector';

  private constructor(
    readonly dimensions: number,
    private readonly index: VectorIndex,
    private readonly chunks: Map<string, IndexedChunk>,
    private readonly store: VersionedDocumentStore<EmbeddedChunk>,
  ) {}

  static async open(options: EmbeddedVectorBackendOptions): Promise<EmbeddedVectorBackend> {
    const { dimensions } = options;
    const index = (options.createIndex ?? ((dims) => new AdaptiveVectorIndex(dims)))(dimensions);
    const chunks = new Map<string, IndexedChunk>();
    const snapshot: IndexSnapshot = {
      save: async (dir) => {
        if (isPersistent(index)) await index.save(dir);
      },
      async load(dir) {
        if (isPersistent(index)) await index.load(dir);
      },
    };
    const store = await VersionedDocumentStore.open<EmbeddedChunk>({
      ...(options.dataDir === undefined
        ? {}
        : {
            files: {
              log: join(options.dataDir, VECTOR_LOG_FILE),
              snapshot: join(options.dataDir, VECTOR_SNAPSHOT_DIR),
              index: snapshot,
              ...(options.snapshotAfter === undefined ? {} : { snapshotAfter: options.snapshotAfter }),
            },
          }),
      durable: options.durable ?? true,
      codec: vectorCodec(dimensions),
      listener: {
        restored(doc, items) {
          const partition = partitionKey(doc.tenantId, doc.kbId);
          // What the snapshot's index part did not restore is rebuilt from its vector.
          const restoredIndex = isPersistent(index) ? index : undefined;
          for (const { chunk, vector } of items) {
            if (!restoredIndex?.holds(partition, chunk.chunkId)) index.add(partition, chunk.chunkId, vector);
            chunks.set(chunkKey(partition, chunk.chunkId), chunk);
          }
        },
        added(doc, items) {
          const partition = partitionKey(doc.tenantId, doc.kbId);
          for (const { chunk, vector } of items) {
            index.add(partition, chunk.chunkId, vector);
            chunks.set(chunkKey(partition, chunk.chunkId), chunk);
          }
        },
        removed(doc, items) {
          const partition = partitionKey(doc.tenantId, doc.kbId);
          for (const { chunk } of items) {
            index.remove(partition, chunk.chunkId);
            chunks.delete(chunkKey(partition, chunk.chunkId));
          }
        },
      },
    });
    return new EmbeddedVectorBackend(dimensions, index, chunks, store);
  }

  async search(request: VectorSearchRequest, signal: AbortSignal): Promise<ScoredChunk[]> {
    assertScope(request.scope);
    signal.throwIfAborted();
    const docIds = selectedDocIds(request.scope);
    if (docIds) return this.searchDocuments(request, docIds);
    const hits = this.index.search(scopePartitions(request.scope), request.vector, request.limit);
    return hits.map((hit) => ({
      chunk: this.chunks.get(chunkKey(hit.partition, hit.key)) as IndexedChunk,
      score: hit.score,
    }));
  }

  /**
   * Selected documents are few: their chunks are scored exactly, one dot product each, rather
   * than filtered out of an approximate search that could return none of them.
   */
  private searchDocuments(request: VectorSearchRequest, docIds: ReadonlySet<string>): ScoredChunk[] {
    const best = new TopK<IndexedChunk>(request.limit);
    for (const kbId of new Set(request.scope.kbIds)) {
      for (const docId of docIds) {
        for (const { chunk, vector } of this.store.items({ tenantId: request.scope.tenantId, kbId, docId })) {
          best.push(dot(request.vector, vector), chunk);
        }
      }
    }
    return best.drain().map(({ score, item }) => ({ chunk: item, score }));
  }

  async upsertDocument(doc: VersionedDocumentKey, items: readonly EmbeddedChunk[]): Promise<WriteOutcome> {
    this.checkVectors(items);
    return this.store.upsert(doc, items);
  }

  deleteDocument(ref: VersionedDocumentKey): Promise<WriteOutcome> {
    return this.store.delete(ref);
  }

  async writeDocuments(writes: readonly DocumentWrite<EmbeddedChunk>[]): Promise<WriteOutcome[]> {
    for (const write of writes) if (write.op === 'upsert') this.checkVectors(write.items);
    return this.store.write(writes);
  }

  private checkVectors(items: readonly EmbeddedChunk[]): void {
    for (const { chunk, vector } of items) {
      if (vector.length !== this.dimensions) {
        throw new ValidationError(
          `chunk ${chunk.chunkId} has a ${vector.length}-dimension vector, the index holds ${this.dimensions}`,
        );
      }
    }
  }

  async documentState(key: DocumentKey): Promise<DocumentState | undefined> {
    return this.store.state(key);
  }

  bufferedVectors(): number {
    return this.index.buffered?.() ?? 0;
  }

  /** Writes logged since the last snapshot: what a restart replays. */
  get tail(): number {
    return this.store.tail;
  }

  async readDocuments(tenantId: string, kbId: string): Promise<Array<StoredDocument<EmbeddedChunk>>> {
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

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += (a[i] as number) * (b[i] as number);
  return sum;
}
