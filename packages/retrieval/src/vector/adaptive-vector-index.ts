import { TopK } from '../util/top-k.js';
import { FlatVectorIndex } from './flat-vector-index.js';
import type { HnswParameters } from './hnsw-vector-index.js';
import { HnswVectorIndex } from './hnsw-vector-index.js';
import type { PersistentVectorIndex, VectorHit } from './vector-index.js';

/**
 * Choosing the vector index, by measurement (`bench/retrieval.ts`, results in
 * `bench/results/retrieval.md`, 384-dimension vectors): a flat scan is exact and takes a write
 * in ~0.02 ms, but its query time grows with the partition (≈0.3 µs per vector: ~1 ms at the
 * 3,337 dev paragraphs, ~31 ms at 100k); HNSW (ef 128) answers in ~0.16 ms at 3.3k and ~0.7 ms
 * at 100k with recall@10 0.99 and 0.91, but costs ~0.25–1.2 ms per insert. So each partition
 * (one tenant's kb) starts flat, where a scan stays under ~0.3 ms and recall is exact, and moves
 * to an HNSW graph once it holds `flatLimit` vectors.
 */
export const DEFAULT_FLAT_LIMIT = 1_000;

/**
 * How long one turn of the graph builder may hold the event loop: a query or a write waiting
 * behind it waits at most this (plus one insert, ~1 ms).
 */
export const DEFAULT_MOVE_SLICE_MS = 5;

export interface AdaptiveVectorIndexOptions {
  flatLimit?: number;
  hnsw?: Partial<HnswParameters>;
  /** See DEFAULT_MOVE_SLICE_MS. */
  moveSliceMs?: number;
  /** How the builder waits between slices (default: the next turn of the event loop); tests hold it with their own. */
  nextTurn?: () => Promise<void>;
}

const nextEventLoopTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * A write never waits for the graph: an insert costs ~1 ms in HNSW and ~0.02 ms in a flat
 * scan (issue 12: 436 documents/s end to end when every insert went into the graph). A vector
 * written to a partition that has a graph goes to that partition's flat buffer, which queries
 * scan exactly, so it is searchable at once; a background task moves buffered vectors into the
 * graph, a slice of the event loop at a time, yielding to queries and writes between slices.
 */
export class AdaptiveVectorIndex implements PersistentVectorIndex {
  /** Small partitions, and the buffer of partitions that have a graph. */
  private readonly flat: FlatVectorIndex;
  private readonly hnsw: HnswVectorIndex;
  private readonly graphed = new Set<string>();
  /** The vectors in `flat`, per partition, in the order written: the order the builder moves them. */
  private readonly flatRows = new Map<string, Map<string, Float32Array>>();
  private building: Promise<void> | undefined;
  private pauses = 0;
  private resumed: (() => void) | undefined;

  constructor(
    readonly dimensions: number,
    private readonly options: AdaptiveVectorIndexOptions = {},
  ) {
    this.flat = new FlatVectorIndex(dimensions);
    this.hnsw = new HnswVectorIndex(dimensions, options.hnsw);
  }

  /** Whether a partition has moved to the HNSW graph (its newest vectors may still be buffered). */
  usesGraph(partition: string): boolean {
    return this.graphed.has(partition);
  }

  /** Vectors written to partitions with a graph that are not in the graph yet. */
  buffered(partition?: string): number {
    let total = 0;
    for (const name of partition === undefined ? this.graphed : [partition])
      if (this.graphed.has(name)) total += this.flatRows.get(name)?.size ?? 0;
    return total;
  }

  /** Resolves once every buffered vector is in its graph. */
  async settled(): Promise<void> {
    while (this.building) await this.building;
  }

  add(partition: string, key: string, vector: Float32Array): void {
    this.flat.add(partition, key, vector);
    // A newer vector replaces the graph's copy, which would otherwise still be found.
    if (this.graphed.has(partition)) this.hnsw.remove(partition, key);
    let rows = this.flatRows.get(partition);
    if (!rows) {
      rows = new Map();
      this.flatRows.set(partition, rows);
    }
    rows.delete(key);
    rows.set(key, vector);
    if (!this.graphed.has(partition) && rows.size >= (this.options.flatLimit ?? DEFAULT_FLAT_LIMIT))
      this.graphed.add(partition);
    if (this.graphed.has(partition)) this.build();
  }

  remove(partition: string, key: string): boolean {
    if (this.flatRows.get(partition)?.delete(key)) return this.flat.remove(partition, key);
    return this.hnsw.remove(partition, key);
  }

  size(partition?: string): number {
    return this.flat.size(partition) + this.hnsw.size(partition);
  }

  holds(partition: string, key: string): boolean {
    return this.flatRows.get(partition)?.has(key) === true || this.hnsw.holds(partition, key);
  }

  /** The graphs' files keep their vectors; the flat partitions and buffers are not saved. */
  savesVector(partition: string, key: string): boolean {
    return this.flatRows.get(partition)?.has(key) !== true && this.hnsw.holds(partition, key);
  }

  savedVector(partition: string, key: string): Float32Array | undefined {
    return this.savesVector(partition, key) ? this.hnsw.savedVector(partition, key) : undefined;
  }

  search(partitions: readonly string[], query: Float32Array, limit: number): VectorHit[] {
    // The flat scan covers small partitions and the buffers of graphed ones; keys are in one or the other.
    const scanned = this.flat.search(partitions, query, limit);
    const graphed = partitions.filter((partition) => this.graphed.has(partition));
    if (graphed.length === 0) return scanned;
    const best = new TopK<VectorHit>(limit);
    for (const hit of [...scanned, ...this.hnsw.search(graphed, query, limit)]) best.push(hit.score, hit);
    return best.drain().map(({ item }) => item);
  }

  /**
   * Writes the graphs; flat partitions and buffers are cheaper to rebuild from their vectors
   * than to keep (`holds` tells the loader which keys the graphs restored). The builder waits
   * meanwhile: hnswlib writes a graph from another thread, which must not see it change.
   */
  async save(dir: string): Promise<void> {
    this.pauses++;
    try {
      await this.hnsw.save(dir);
    } finally {
      this.pauses--;
      if (this.pauses === 0) this.resumed?.();
    }
  }

  async load(dir: string): Promise<void> {
    await this.hnsw.load(dir);
    for (const partition of this.hnsw.partitionNames()) this.graphed.add(partition);
  }

  /** Starts the background builder unless it runs already; it stops when the buffers are empty. */
  private build(): void {
    if (this.building) return;
    this.building = (async () => {
      try {
        do {
          // Yield first, so the write that started the builder (and the rest of its batch) finishes.
          await (this.options.nextTurn ?? nextEventLoopTurn)();
          while (this.pauses > 0) await new Promise<void>((resolve) => (this.resumed = resolve));
        } while (this.moveSlice());
      } finally {
        this.building = undefined;
      }
    })();
  }

  /** Moves buffered vectors into their graphs for one slice; says whether any are left. */
  private moveSlice(): boolean {
    const until = performance.now() + (this.options.moveSliceMs ?? DEFAULT_MOVE_SLICE_MS);
    let moved = 0;
    for (const partition of this.graphed) {
      const rows = this.flatRows.get(partition);
      if (!rows) continue;
      for (const [key, vector] of rows) {
        if (moved > 0 && performance.now() >= until) return true;
        this.hnsw.add(partition, key, vector);
        this.flat.remove(partition, key);
        rows.delete(key);
        moved++;
      }
      // The emptied buffer's scan arrays go too, rather than being scanned empty by every query.
      this.flat.drop(partition);
      this.flatRows.delete(partition);
    }
    return false;
  }
}
