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
import type { BlobRef } from '../storage/snapshot-blobs.js';
import { readBlob } from '../storage/snapshot-blobs.js';
import type { IndexSnapshot } from '../storage/store-snapshot.js';
import type { ItemCodec } from '../storage/versioned-document-store.js';
import { VersionedDocumentStore } from '../storage/versioned-document-store.js';
import { TopK } from '../util/top-k.js';
import { AdaptiveVectorIndex } from './adaptive-vector-index.js';
import { checkDimensions } from './flat-vector-index.js';
import type { PersistentVectorIndex, VectorIndex } from './vector-index.js';
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
  /** See `StoreFiles.onSnapshotFailed`. */
  onSnapshotFailed?: (error: unknown) => void;
}

export const VECTOR_LOG_FILE = 'vector.log.jsonl';
export const VECTOR_SNAPSHOT_DIR = 'vector.snapshot';

// A log line holds the chunk and its vector in base64. A snapshot (format 5: [chunk id, chunk,
// vector]; format 4 the same as an object) holds the chunk as JSON bytes in its item blobs,
// parsed only when the chunk is first read (a hit, a repair, a document's exact search), and the
// vector there too unless the index's own files keep it (an HNSW graph: then `null`): a start
// neither parses a hundred thousand chunks nor reads their vectors twice. Snapshots of formats 1
// to 3 hold the chunk in the entry, and the vector as base64 (format 1) or bytes.
const blobRefSchema = z.tuple([z.number().int().nonnegative(), z.number().int().nonnegative()]);
const storedSchema = z.union([
  z.tuple([z.string().min(1), blobRefSchema, blobRefSchema.nullable()]),
  z.object({ chunkId: z.string().min(1), chunk: blobRefSchema, vector: blobRefSchema.nullable() }),
  z.object({ chunk: indexedChunkSchema, vector: z.union([z.string(), blobRefSchema]) }),
]);
type Stored = z.infer<typeof storedSchema>;

/**
 * A snapshot's item: the chunk parsed from its bytes when first read, the vector read from the
 * item bytes or, when the index's files kept it, from the index. The snapshot's item bytes stay
 * in memory (outside the JS heap, about 0.7 KB a chunk) while any of its items is live.
 */
class SnapshotItem implements EmbeddedChunk {
  private parsed: IndexedChunk | undefined;

  constructor(
    readonly chunkId: string,
    private readonly itemBlobs: Buffer,
    private readonly chunkOffset: number,
    private readonly chunkLength: number,
    private readonly stored: Float32Array | undefined,
    private readonly index: PersistentVectorIndex,
    private readonly partition: string,
  ) {}

  get chunk(): IndexedChunk {
    this.parsed ??= JSON.parse(this.chunkBytes().toString('utf8')) as IndexedChunk;
    return this.parsed;
  }

  get vector(): Float32Array {
    const vector = this.stored ?? this.index.savedVector?.(this.partition, this.chunkId);
    if (!vector) throw new Error(`the vector index no longer holds the vector of chunk ${this.chunkId}`);
    return vector;
  }

  /** The chunk as the snapshot holds it, for the next snapshot to keep as it is. */
  chunkBytes(): Buffer {
    return this.itemBlobs.subarray(this.chunkOffset, this.chunkOffset + this.chunkLength);
  }
}

const chunkIdOf = (item: EmbeddedChunk) => (item instanceof SnapshotItem ? item.chunkId : item.chunk.chunkId);

function vectorCodec(dimensions: number, index: VectorIndex): ItemCodec<EmbeddedChunk> {
  const persistent = isPersistent(index) ? index : undefined;
  const vectorFrom = (stored: string | BlobRef, itemBlobs: Buffer) => {
    if (typeof stored !== 'string') return readBlob(itemBlobs, stored, Float32Array);
    const bytes = Buffer.from(stored, 'base64');
    // Copy into an aligned buffer: a Float32Array view needs a 4-byte aligned offset.
    const vector = new Float32Array(bytes.byteLength / 4);
    new Uint8Array(vector.buffer).set(bytes);
    return vector;
  };
  return {
    encode: ({ chunk, vector }) => ({
      chunk,
      vector: Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString('base64'),
    }),
    encodeForSnapshot(item, itemBlobs, doc) {
      const chunkId = chunkIdOf(item);
      const partition = partitionKey(doc.tenantId, doc.kbId);
      return [
        chunkId,
        itemBlobs.add(item instanceof SnapshotItem ? item.chunkBytes() : Buffer.from(JSON.stringify(item.chunk))),
        persistent?.savesVector?.(partition, chunkId) ? null : itemBlobs.add(item.vector),
      ];
    },
    decode(value, itemBlobs, verified, doc) {
      const read = verified.entries ? (value as Stored) : storedSchema.parse(value);
      const stored = Array.isArray(read) ? { chunkId: read[0], chunk: read[1], vector: read[2] } : read;
      if (!('chunkId' in stored)) {
        const vector = vectorFrom(stored.vector, itemBlobs);
        checkDimensions(vector, dimensions);
        return { chunk: stored.chunk, vector };
      }
      const vector = stored.vector === null ? undefined : readBlob(itemBlobs, stored.vector, Float32Array);
      if (vector) checkDimensions(vector, dimensions);
      else if (!persistent?.savesVector) throw new Error(`chunk ${stored.chunkId}: its vector is in no index file`);
      const partition = partitionKey(doc.tenantId, doc.kbId);
      const [offset, bytes] = stored.chunk;
      if (persistent && verified.items)
        return new SnapshotItem(stored.chunkId, itemBlobs, offset, bytes, vector, persistent, partition);
      // Bytes no checksum vouches for are validated now, and a vector kept in the index is read now.
      if (offset + bytes > itemBlobs.byteLength) throw new Error(`chunk ${stored.chunkId} does not fit the item bytes`);
      const chunk = indexedChunkSchema.parse(JSON.parse(itemBlobs.toString('utf8', offset, offset + bytes)));
      const held = vector ?? persistent?.savedVector?.(partition, stored.chunkId);
      if (!held) throw new Error(`chunk ${stored.chunkId}: its vector is in no index file`);
      return { chunk, vector: held };
    },
  };
}

/** Vector search over an in-process index, persisted as a replayable write log in `dataDir`. */
export class EmbeddedVectorBackend implements VectorBackend {
  readonly name = 'vector';

  private constructor(
    readonly dimensions: number,
    private readonly index: VectorIndex,
    /** The live items by partition and chunk id: a hit's chunk is read from its item when returned. */
    private readonly items: Map<string, EmbeddedChunk>,
    private readonly store: VersionedDocumentStore<EmbeddedChunk>,
  ) {}

  static async open(options: EmbeddedVectorBackendOptions): Promise<EmbeddedVectorBackend> {
    const { dimensions } = options;
    const index = (options.createIndex ?? ((dims) => new AdaptiveVectorIndex(dims)))(dimensions);
    const items = new Map<string, EmbeddedChunk>();
    const snapshot: IndexSnapshot = {
      save: async (dir) => {
        if (isPersistent(index)) await index.save(dir);
      },
      async load(dir) {
        if (isPersistent(index)) await index.load(dir);
        return true;
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
              ...(options.onSnapshotFailed === undefined ? {} : { onSnapshotFailed: options.onSnapshotFailed }),
            },
          }),
      durable: options.durable ?? true,
      codec: vectorCodec(dimensions, index),
      listener: {
        restored(doc, restoredItems) {
          const partition = partitionKey(doc.tenantId, doc.kbId);
          // What the snapshot's index part did not restore is rebuilt from its vector.
          const restoredIndex = isPersistent(index) ? index : undefined;
          for (const item of restoredItems) {
            const chunkId = chunkIdOf(item);
            if (!restoredIndex?.holds(partition, chunkId)) index.add(partition, chunkId, item.vector);
            items.set(chunkKey(partition, chunkId), item);
          }
        },
        added(doc, addedItems) {
          const partition = partitionKey(doc.tenantId, doc.kbId);
          for (const item of addedItems) {
            index.add(partition, item.chunk.chunkId, item.vector);
            items.set(chunkKey(partition, item.chunk.chunkId), item);
          }
        },
        removed(doc, removedItems) {
          const partition = partitionKey(doc.tenantId, doc.kbId);
          for (const item of removedItems) {
            const chunkId = chunkIdOf(item);
            index.remove(partition, chunkId);
            items.delete(chunkKey(partition, chunkId));
          }
        },
      },
    });
    return new EmbeddedVectorBackend(dimensions, index, items, store);
  }

  async search(request: VectorSearchRequest, signal: AbortSignal): Promise<ScoredChunk[]> {
    assertScope(request.scope);
    signal.throwIfAborted();
    const docIds = selectedDocIds(request.scope);
    if (docIds) return this.searchDocuments(request, docIds);
    const hits = this.index.search(scopePartitions(request.scope), request.vector, request.limit);
    return hits.map((hit) => ({
      chunk: (this.items.get(chunkKey(hit.partition, hit.key)) as EmbeddedChunk).chunk,
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
