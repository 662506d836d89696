import { describe, expect, it } from 'vitest';
import { AdaptiveVectorIndex, FlatVectorIndex, HashingEmbedder, HnswVectorIndex } from '../src/index.js';

const embedder = new HashingEmbedder({ dimensions: 64 });
const vectorOf = (i: number): Float32Array =>
  embedder.embedOne(`item ${i} colour${i % 17} shape${i % 23} size${i % 5}`);

describe('HnswVectorIndex', () => {
  it('hnsw - finds what the exact scan finds, nearly always', () => {
    const flat = new FlatVectorIndex(64);
    const hnsw = new HnswVectorIndex(64);
    for (let i = 0; i < 2_000; i++) {
      flat.add('p', `k${i}`, vectorOf(i));
      hnsw.add('p', `k${i}`, vectorOf(i));
    }
    let overlap = 0;
    for (let q = 0; q < 50; q++) {
      const query = embedder.embedOne(`colour${q % 17} shape${q % 23}`);
      const exact = new Set(flat.search(['p'], query, 10).map((hit) => hit.key));
      overlap += hnsw.search(['p'], query, 10).filter((hit) => exact.has(hit.key)).length;
    }
    expect(overlap / 500).toBeGreaterThan(0.9);
  });

  it('hnsw - scores are cosines and deleted keys never come back, even when their slot is reused', () => {
    const hnsw = new HnswVectorIndex(64);
    for (let i = 0; i < 20; i++) hnsw.add('p', `k${i}`, vectorOf(i));
    expect(hnsw.remove('p', 'k3')).toBe(true);
    expect(hnsw.remove('p', 'k3')).toBe(false);
    hnsw.add('p', 'replacement', vectorOf(100));
    const hits = hnsw.search(['p'], vectorOf(3), 20);
    expect(hits.map((hit) => hit.key)).not.toContain('k3');
    expect(hits).toHaveLength(20);
    expect(hnsw.search(['p'], vectorOf(100), 1)[0]).toMatchObject({ key: 'replacement' });
    expect(hnsw.search(['p'], vectorOf(100), 1)[0]?.score).toBeCloseTo(1, 4);
  });

  it('hnsw - partitions are separate graphs: another tenant never fills the top k', () => {
    const hnsw = new HnswVectorIndex(64);
    for (let i = 0; i < 200; i++) hnsw.add('other', `o${i}`, vectorOf(1));
    hnsw.add('mine', 'm', vectorOf(50));
    expect(hnsw.search(['mine'], vectorOf(1), 10).map((hit) => hit.key)).toEqual(['m']);
  });

  it('hnsw - grows past its initial capacity', () => {
    const hnsw = new HnswVectorIndex(8);
    const small = new HashingEmbedder({ dimensions: 8 });
    for (let i = 0; i < 2_500; i++) hnsw.add('p', `k${i}`, small.embedOne(`x${i}`));
    expect(hnsw.size('p')).toBe(2_500);
  });
});

describe('AdaptiveVectorIndex', () => {
  it('adaptive - a partition moves to the graph at the limit and keeps every vector', () => {
    const index = new AdaptiveVectorIndex(64, { flatLimit: 50 });
    for (let i = 0; i < 49; i++) index.add('big', `k${i}`, vectorOf(i));
    index.add('small', 's', vectorOf(7));
    expect(index.usesGraph('big')).toBe(false);
    index.add('big', 'k49', vectorOf(49));
    expect(index.usesGraph('big')).toBe(true);
    expect(index.usesGraph('small')).toBe(false);
    expect(index.size('big')).toBe(50);
    index.remove('big', 'k7');
    const hits = index.search(['big', 'small'], vectorOf(7), 3);
    expect(hits[0]).toMatchObject({ partition: 'small', key: 's' });
    expect(hits.map((hit) => hit.key)).not.toContain('k7');
  });
});
