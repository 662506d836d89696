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

export class AdaptiveVectorIndex implements PersistentVectorIndex {
  private readonly flat: FlatVectorIndex;
  private readonly hnsw: HnswVectorIndex;
  private readonly graphed = new Set<string>();
  private readonly flatRows = new Map<string, Map<string, Float32Array>>();

  constructor(
    readonly dimensions: number,
    private readonly options: { flatLimit?: number; hnsw?: Partial<HnswParameters> } = {},
  ) {
    this.flat = new FlatVectorIndex(dimensions);
    this.hnsw = new HnswVectorIndex(dimensions, options.hnsw);
  }

  /** Whether a partition has moved to the HNSW graph. */
  usesGraph(partition: string): boolean {
    return this.graphed.has(partition);
  }

  add(partition: string, key: string, vector: Float32Array): void {
    if (this.graphed.has(partition)) {
      this.hnsw.add(partition, key, vector);
      return;
    }
    this.flat.add(partition, key, vector);
    let rows = this.flatRows.get(partition);
    if (!rows) {
      rows = new Map();
      this.flatRows.set(partition, rows);
    }
    rows.set(key, vector);
    if (rows.size >= (this.options.flatLimit ?? DEFAULT_FLAT_LIMIT)) this.promote(partition, rows);
  }

  remove(partition: string, key: string): boolean {
    if (this.graphed.has(partition)) return this.hnsw.remove(partition, key);
    this.flatRows.get(partition)?.delete(key);
    return this.flat.remove(partition, key);
  }

  size(partition?: string): number {
    return this.flat.size(partition) + this.hnsw.size(partition);
  }

  search(partitions: readonly string[], query: Float32Array, limit: number): VectorHit[] {
    const graphed = partitions.filter((partition) => this.graphed.has(partition));
    const flat = partitions.filter((partition) => !this.graphed.has(partition));
    if (graphed.length === 0) return this.flat.search(flat, query, limit);
    if (flat.length === 0) return this.hnsw.search(graphed, query, limit);
    const best = new TopK<VectorHit>(limit);
    for (const hit of [...this.flat.search(flat, query, limit), ...this.hnsw.search(graphed, query, limit)])
      best.push(hit.score, hit);
    return best.drain().map(({ item }) => item);
  }

  /** Writes the graphs; flat partitions are cheaper to rebuild from their vectors than to keep. */
  save(dir: string): Promise<void> {
    return this.hnsw.save(dir);
  }

  async load(dir: string): Promise<ReadonlySet<string>> {
    const graphed = await this.hnsw.load(dir);
    for (const partition of graphed) this.graphed.add(partition);
    return graphed;
  }

  private promote(partition: string, rows: Map<string, Float32Array>): void {
    for (const [key, vector] of rows) {
      this.hnsw.add(partition, key, vector);
      this.flat.remove(partition, key);
    }
    this.flatRows.delete(partition);
    this.graphed.add(partition);
  }
}
