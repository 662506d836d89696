import { TopK } from '../util/top-k.js';
import type { VectorHit, VectorIndex } from './vector-index.js';

class FlatPartition {
  data: Float32Array;
  keys: Array<string | undefined> = [];
  readonly slots = new Map<string, number>();
  private readonly free: number[] = [];

  constructor(private readonly dimensions: number) {
    this.data = new Float32Array(dimensions * 64);
  }

  add(key: string, vector: Float32Array): void {
    let slot = this.slots.get(key);
    if (slot === undefined) {
      slot = this.free.pop() ?? this.keys.length;
      if (slot === this.keys.length) this.keys.push(undefined);
      this.ensureCapacity(slot + 1);
    }
    this.data.set(vector, slot * this.dimensions);
    this.keys[slot] = key;
    this.slots.set(key, slot);
  }

  remove(key: string): boolean {
    const slot = this.slots.get(key);
    if (slot === undefined) return false;
    this.slots.delete(key);
    this.keys[slot] = undefined;
    this.free.push(slot);
    return true;
  }

  private ensureCapacity(rows: number): void {
    if (rows * this.dimensions <= this.data.length) return;
    const grown = new Float32Array(Math.max(rows, (this.data.length / this.dimensions) * 2) * this.dimensions);
    grown.set(this.data);
    this.data = grown;
  }
}

/**
 * Exact search: one dot product per stored vector, rows packed in one Float32Array per
 * partition. It is the reference the approximate index is measured against, and the faster
 * choice for small knowledge bases (see `adaptive-vector-index.ts`).
 */
export class FlatVectorIndex implements VectorIndex {
  private readonly partitions = new Map<string, FlatPartition>();

  constructor(readonly dimensions: number) {}

  add(partition: string, key: string, vector: Float32Array): void {
    checkDimensions(vector, this.dimensions);
    let target = this.partitions.get(partition);
    if (!target) {
      target = new FlatPartition(this.dimensions);
      this.partitions.set(partition, target);
    }
    target.add(key, vector);
  }

  remove(partition: string, key: string): boolean {
    return this.partitions.get(partition)?.remove(key) ?? false;
  }

  /** Forgets a partition and every vector in it. */
  drop(partition: string): void {
    this.partitions.delete(partition);
  }

  size(partition?: string): number {
    if (partition !== undefined) return this.partitions.get(partition)?.slots.size ?? 0;
    let total = 0;
    for (const target of this.partitions.values()) total += target.slots.size;
    return total;
  }

  search(partitions: readonly string[], query: Float32Array, limit: number): VectorHit[] {
    checkDimensions(query, this.dimensions);
    const best = new TopK<{ partition: string; key: string }>(limit);
    const dims = this.dimensions;
    for (const name of new Set(partitions)) {
      const target = this.partitions.get(name);
      if (!target) continue;
      const { data, keys } = target;
      for (let slot = 0; slot < keys.length; slot++) {
        const key = keys[slot];
        if (key === undefined) continue;
        const base = slot * dims;
        let s0 = 0;
        let s1 = 0;
        let s2 = 0;
        let s3 = 0;
        let i = 0;
        for (; i + 4 <= dims; i += 4) {
          s0 += (data[base + i] as number) * (query[i] as number);
          s1 += (data[base + i + 1] as number) * (query[i + 1] as number);
          s2 += (data[base + i + 2] as number) * (query[i + 2] as number);
          s3 += (data[base + i + 3] as number) * (query[i + 3] as number);
        }
        for (; i < dims; i++) s0 += (data[base + i] as number) * (query[i] as number);
        const score = s0 + s1 + s2 + s3;
        if (score > best.threshold) best.push(score, { partition: name, key });
      }
    }
    return best.drain().map(({ score, item }) => ({ partition: item.partition, key: item.key, score }));
  }
}

export function checkDimensions(vector: Float32Array, dimensions: number): void {
  if (vector.length !== dimensions) {
    throw new RangeError(`vector has ${vector.length} dimensions, the index holds ${dimensions}`);
  }
}
