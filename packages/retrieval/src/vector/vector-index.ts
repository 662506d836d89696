/** A nearest-neighbour index over unit vectors, partitioned like the BM25 index (tenant + kb). */
export interface VectorIndex {
  readonly dimensions: number;
  /** Adds a vector, replacing any vector with the same key in that partition. */
  add(partition: string, key: string, vector: Float32Array): void;
  remove(partition: string, key: string): boolean;
  size(partition?: string): number;
  /** Inner-product (cosine, for unit vectors) search over the named partitions only. */
  search(partitions: readonly string[], query: Float32Array, limit: number): VectorHit[];
  /** Vectors searchable but not yet in the index's final structure (see VectorBackend.bufferedVectors). */
  buffered?(): number;
}

export interface VectorHit {
  partition: string;
  key: string;
  score: number;
}

/** An index that keeps its own state in a snapshot, so that a restart does not rebuild it. */
export interface PersistentVectorIndex extends VectorIndex {
  save(dir: string): Promise<void>;
  /** Loads what `save` wrote to `dir`; what it did not restore is rebuilt by adding (see `holds`). */
  load(dir: string): Promise<void>;
  /** Whether the index holds a vector for the key: after `load`, the keys the snapshot restored. */
  holds(partition: string, key: string): boolean;
  /**
   * Whether `save` writes the key's vector into the index's own files (an HNSW graph keeps its
   * vectors): a snapshot need not keep it a second time, and reads it back with `savedVector`.
   */
  savesVector?(partition: string, key: string): boolean;
  /** The vector `save` keeps for the key (see `savesVector`); undefined when it keeps none. */
  savedVector?(partition: string, key: string): Float32Array | undefined;
}

export function isPersistent(index: VectorIndex): index is PersistentVectorIndex {
  return 'save' in index && 'load' in index;
}
