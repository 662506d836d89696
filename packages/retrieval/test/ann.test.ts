import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as HnswLib from 'hnswlib-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AdaptiveVectorIndex, FlatVectorIndex, HashingEmbedder, HnswVectorIndex } from '../src/index.js';

const { HierarchicalNSW } = createRequire(import.meta.url)('hnswlib-node') as typeof HnswLib;

const embedder = new HashingEmbedder({ dimensions: 64 });
const vectorOf = (i: number): Float32Array =>
  embedder.embedOne(`item ${i} colour${i % 17} shape${i % 23} size${i % 5}`);

/**
 * Changes a saved graph through hnswlib itself, as `add` did before each label kept its own slot:
 * addPoint with replaceDeleted puts the label on whichever deleted slot hnswlib picks.
 */
async function changeSavedGraph(file: string, change: (graph: HnswLib.HierarchicalNSW) => void): Promise<void> {
  const graph = new HierarchicalNSW('ip', 64);
  await graph.readIndex(file, true);
  change(graph);
  await graph.writeIndex(file);
}

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

  it('hnsw - under churn, several slots free at once, every live key keeps its vector and no removed key comes back', () => {
    const hnsw = new HnswVectorIndex(64);
    const live = new Map<string, number>();
    let next = 0;
    const add = (key: string, item: number) => {
      hnsw.add('p', key, vectorOf(item));
      live.set(key, item);
    };
    for (; next < 50; next++) add(`k${next}`, next);
    for (let round = 0; round < 30; round++) {
      // Five removed, then one rewritten and five new: the new ones take the five freed slots.
      const keys = [...live.keys()];
      for (let i = 0; i < 5; i++) {
        const key = keys[(round * 13 + i * 7) % keys.length] as string;
        if (live.delete(key)) expect(hnsw.remove('p', key)).toBe(true);
      }
      add([...live.keys()][round % live.size] as string, 10_000 + round);
      for (let i = 0; i < 5; i++, next++) add(`k${next}`, next);
    }
    expect(hnsw.size('p')).toBe(live.size);
    for (const [key, item] of live) expect(hnsw.savedVector('p', key), key).toEqual(vectorOf(item));
    for (let q = 0; q < 20; q++) {
      for (const hit of hnsw.search(['p'], vectorOf(q * 31), 10)) expect(live.has(hit.key), hit.key).toBe(true);
    }
  });

  it('hnsw - partitions are separate graphs: another tenant never fills the top k', () => {
    const hnsw = new HnswVectorIndex(64);
    for (let i = 0; i < 200; i++) hnsw.add('other', `o${i}`, vectorOf(1));
    hnsw.add('mine', 'm', vectorOf(50));
    expect(hnsw.search(['mine'], vectorOf(1), 10).map((hit) => hit.key)).toEqual(['m']);
  });

  describe('saved and loaded', () => {
    let dir: string;
    beforeEach(async () => {
      dir = await mkdtemp(join(tmpdir(), 'hopline-hnsw-'));
    });
    afterEach(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    it('hnsw - a graph saved with freed labels loads with every live vector, and a freed label is taken again', async () => {
      const hnsw = new HnswVectorIndex(64);
      for (let i = 0; i < 30; i++) hnsw.add('p', `k${i}`, vectorOf(i));
      for (const i of [3, 11, 17, 25]) hnsw.remove('p', `k${i}`);
      hnsw.add('p', 'k40', vectorOf(40));
      await hnsw.save(dir);
      const loaded = new HnswVectorIndex(64);
      await loaded.load(dir);
      expect(loaded.size('p')).toBe(27);
      for (let i = 0; i < 30; i++)
        expect(loaded.savedVector('p', `k${i}`), `k${i}`).toEqual(
          [3, 11, 17, 25].includes(i) ? undefined : vectorOf(i),
        );
      loaded.add('p', 'k41', vectorOf(41));
      expect(loaded.search(['p'], vectorOf(41), 1)[0]).toMatchObject({ key: 'k41' });
      expect(loaded.savedVector('p', 'k40')).toEqual(vectorOf(40));
    });

    it.each([
      // k1's slot deleted and taken by a label the snapshot never handed out: k1's label is on no slot.
      [
        'a live key on no slot',
        [] as number[],
        (graph: HnswLib.HierarchicalNSW) => {
          graph.markDelete(1);
          graph.addPoint(Array.from(vectorOf(9)), 3, true);
        },
      ],
      // k0's deleted slot taken by k2's label: every live key's label is known, but label 2 is on two slots.
      [
        'a label on two slots',
        [0],
        (graph: HnswLib.HierarchicalNSW) => graph.addPoint(Array.from(vectorOf(9)), 2, true),
      ],
    ] as const)(
      'hnsw - a graph whose labels left their slots (%s) is refused with the re-index that replaces it',
      async (_case, removed, change) => {
        const hnsw = new HnswVectorIndex(64);
        for (let i = 0; i < 3; i++) hnsw.add('p', `k${i}`, vectorOf(i));
        for (const i of removed) hnsw.remove('p', `k${i}`);
        await hnsw.save(dir);
        await changeSavedGraph(join(dir, 'graph-0.hnsw'), change);
        await expect(new HnswVectorIndex(64).load(dir)).rejects.toThrow(
          /graph-0\.hnsw: the HNSW graph's labels do not match .*"Changing the embedder"/,
        );
      },
    );
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

  it('adaptive - a vector written past the limit is searchable at once, ranked as the exact scan ranks it', () => {
    const index = new AdaptiveVectorIndex(64, { flatLimit: 50 });
    const exact = new FlatVectorIndex(64);
    for (let i = 0; i < 300; i++) {
      index.add('big', `k${i}`, vectorOf(i));
      exact.add('big', `k${i}`, vectorOf(i));
    }
    // No turn of the event loop yet: the builder has not run, every vector is in the buffer.
    expect(index.usesGraph('big')).toBe(true);
    expect(index.buffered('big')).toBe(300);
    for (let q = 0; q < 20; q++) {
      const query = embedder.embedOne(`colour${q % 17} shape${q % 23}`);
      expect(index.search(['big'], query, 10)).toEqual(exact.search(['big'], query, 10));
    }
    expect(index.search(['big'], vectorOf(299), 1)[0]).toMatchObject({ key: 'k299' });
  });

  it('adaptive - the builder moves the buffer into the graph in slices while queries keep answering', async () => {
    const index = new AdaptiveVectorIndex(64, { flatLimit: 20, moveSliceMs: 0 });
    for (let i = 0; i < 120; i++) index.add('big', `k${i}`, vectorOf(i));
    let turns = 0;
    while (index.buffered() > 0) {
      await new Promise((resolve) => setImmediate(resolve));
      turns++;
      // Between slices: nothing lost, nothing twice, the newest vector still found first.
      expect(index.size('big')).toBe(120);
      const keys = index.search(['big'], vectorOf(119), 120).map((hit) => hit.key);
      expect(new Set(keys).size).toBe(keys.length);
      expect(keys[0]).toBe('k119');
    }
    expect(turns).toBeGreaterThan(10);
    await index.settled();
    expect(index.buffered()).toBe(0);
    expect(index.search(['big'], vectorOf(7), 1)[0]).toMatchObject({ key: 'k7' });
  });

  it('adaptive - deletes and rewrites during the move land, wherever the vector was', async () => {
    const index = new AdaptiveVectorIndex(64, { flatLimit: 20, moveSliceMs: 0 });
    for (let i = 0; i < 100; i++) index.add('big', `k${i}`, vectorOf(i));
    for (let turn = 0; turn < 30; turn++) await new Promise((resolve) => setImmediate(resolve));
    // Some vectors are in the graph now, the rest still buffered: delete and rewrite in both.
    const buffered = index.buffered('big');
    expect(buffered).toBeGreaterThan(0);
    expect(buffered).toBeLessThan(100);
    for (let i = 0; i < 100; i += 10) expect(index.remove('big', `k${i}`)).toBe(true);
    expect(index.remove('big', 'k0')).toBe(false);
    for (let i = 5; i < 100; i += 10) index.add('big', `k${i}`, vectorOf(1_000 + i));
    await index.settled();
    expect(index.size('big')).toBe(90);
    const all = index.search(['big'], vectorOf(0), 100).map((hit) => hit.key);
    for (let i = 0; i < 100; i += 10) expect(all).not.toContain(`k${i}`);
    for (let i = 5; i < 100; i += 10) {
      const [best] = index.search(['big'], vectorOf(1_000 + i), 1);
      expect(best).toMatchObject({ key: `k${i}` });
      expect(best?.score).toBeCloseTo(1, 4);
    }
  });

  it('adaptive - a snapshot taken while vectors are buffered restores the graph, and the buffer is rebuilt', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'hopline-adaptive-'));
    try {
      const index = new AdaptiveVectorIndex(64, { flatLimit: 20, moveSliceMs: 0 });
      for (let i = 0; i < 100; i++) index.add('big', `k${i}`, vectorOf(i));
      index.add('small', 's', vectorOf(3));
      for (let turn = 0; turn < 30; turn++) await new Promise((resolve) => setImmediate(resolve));
      const bufferedAtSave = index.buffered('big');
      expect(bufferedAtSave).toBeGreaterThan(0);
      await index.save(dir);

      const restored = new AdaptiveVectorIndex(64, { flatLimit: 20 });
      await restored.load(dir);
      // What the graph held is restored; the buffer and the flat partitions are not, so the
      // loader adds them from their vectors, as the vector backend does with its documents.
      const held = Array.from({ length: 100 }, (_, i) => restored.holds('big', `k${i}`));
      expect(held.filter(Boolean).length).toBe(100 - bufferedAtSave);
      expect(restored.holds('small', 's')).toBe(false);
      for (let i = 0; i < 100; i++) if (!held[i]) restored.add('big', `k${i}`, vectorOf(i));
      restored.add('small', 's', vectorOf(3));

      expect(restored.size()).toBe(101);
      for (let q = 0; q < 10; q++) {
        const query = vectorOf(q * 9);
        expect(restored.search(['big', 'small'], query, 5).map((hit) => hit.key)).toEqual(
          index.search(['big', 'small'], query, 5).map((hit) => hit.key),
        );
      }
      await Promise.all([index.settled(), restored.settled()]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
