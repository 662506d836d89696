import { describe, expect, it } from 'vitest';
import { fuse, fuseByRelativeScore, fuseByRrf, FUSION_METHODS } from '../src/index.js';
import { chunkOf } from './fixtures.js';

const hit = (id: string, score: number) => ({ chunk: chunkOf({ docId: id, text: id }), score });

describe('fuseByRrf', () => {
  it('rrf - sums weighted reciprocal ranks and marks chunks found by both HYBRID', () => {
    const fused = fuseByRrf(
      [
        { path: 'bm25', weight: 1, hits: [hit('a', 9), hit('b', 5)] },
        { path: 'vector', weight: 2, hits: [hit('b', 0.9), hit('c', 0.8)] },
      ],
      { k: 60, keep: 10 },
    );
    expect(fused.map((c) => c.chunk.docId)).toEqual(['b', 'c', 'a']);
    const b = fused[0];
    expect(b?.fused).toBeCloseTo(1 / 62 + 2 / 61, 10);
    expect(b).toMatchObject({ foundBy: 'HYBRID', bm25: 5, vector: 0.9 });
    expect(fused[1]).toMatchObject({ foundBy: 'VECTOR', vector: 0.8 });
    expect(fused[1]?.bm25).toBeUndefined();
    expect(fused[2]).toMatchObject({ foundBy: 'BM25', bm25: 9 });
  });

  it('rrf - keeps only the requested number of candidates', () => {
    const fused = fuseByRrf([{ path: 'bm25', weight: 1, hits: ['a', 'b', 'c'].map((id, i) => hit(id, 3 - i)) }], {
      k: 60,
      keep: 2,
    });
    expect(fused.map((c) => c.chunk.docId)).toEqual(['a', 'b']);
  });

  it('rrf - duplicates by dedupe key count once, at their best rank', () => {
    const duplicate = {
      chunk: { ...chunkOf({ docId: 'x', text: 'same' }), chunkId: 'other', dedupeKey: 'a#0' },
      score: 1,
    };
    const fused = fuseByRrf([{ path: 'bm25', weight: 1, hits: [hit('a', 3), duplicate, hit('b', 1)] }], {
      k: 60,
      keep: 10,
    });
    expect(fused.map((c) => c.chunk.dedupeKey)).toEqual(['a#0', 'b#0']);
    expect(fused[1]?.fused).toBeCloseTo(1 / 62, 10);
  });
});

describe('fuseByRelativeScore', () => {
  it('relative-score - scales each list to [0, 1] by its own min and max, weights and sums, and marks HYBRID', () => {
    const fused = fuseByRelativeScore(
      [
        { path: 'bm25', weight: 1, hits: [hit('a', 12), hit('b', 8), hit('c', 2)] },
        { path: 'vector', weight: 0.5, hits: [hit('c', 0.9), hit('b', 0.6), hit('d', 0.3)] },
      ],
      { keep: 10 },
    );
    expect(fused.map((c) => [c.chunk.docId, c.foundBy])).toEqual([
      ['a', 'BM25'],
      ['b', 'HYBRID'],
      ['c', 'HYBRID'],
      ['d', 'VECTOR'],
    ]);
    expect(fused[0]?.fused).toBeCloseTo(1, 10);
    expect(fused[1]?.fused).toBeCloseTo(0.6 + 0.5 * 0.5, 10);
    expect(fused[2]?.fused).toBeCloseTo(0 + 0.5 * 1, 10);
    expect(fused[3]?.fused).toBeCloseTo(0, 10);
    expect(fused[1]).toMatchObject({ bm25: 8, vector: 0.6 });
  });

  it('relative-score - a chunk at the tail of a list gains nothing from it, where rrf lets it overtake a confident lead', () => {
    // BM25 is sure of "a"; the vector path returns "b" last of its hits.
    const lists = [
      { path: 'bm25' as const, weight: 1, hits: [hit('a', 20), hit('b', 6), hit('c', 5)] },
      { path: 'vector' as const, weight: 0.5, hits: [hit('x', 0.4), hit('y', 0.35), hit('b', 0.2)] },
    ];
    expect(fuseByRelativeScore(lists, { keep: 3 }).map((c) => c.chunk.docId)).toEqual(['a', 'x', 'y']);
    expect(fuseByRrf(lists, { k: 60, keep: 1 })[0]?.chunk.docId).toBe('b');
  });

  it('relative-score - a list whose hits all score alike gives each of them the full weight', () => {
    const fused = fuseByRelativeScore([{ path: 'vector', weight: 0.25, hits: [hit('a', 0.5), hit('b', 0.5)] }], {
      keep: 10,
    });
    expect(fused.map((c) => c.fused)).toEqual([0.25, 0.25]);
  });

  it('relative-score - duplicates by dedupe key count once, and keep bounds the list', () => {
    const duplicate = {
      chunk: { ...chunkOf({ docId: 'x', text: 'same' }), chunkId: 'other', dedupeKey: 'a#0' },
      score: 2,
    };
    const fused = fuseByRelativeScore(
      [{ path: 'bm25', weight: 1, hits: [hit('a', 3), duplicate, hit('b', 1), hit('c', 0)] }],
      { keep: 2 },
    );
    expect(fused.map((c) => [c.chunk.dedupeKey, c.fused])).toEqual([
      ['a#0', 1],
      ['b#0', 1 / 3],
    ]);
  });
});

describe('fuse', () => {
  it('fusion - dispatches on the method', () => {
    const lists = [
      { path: 'bm25' as const, weight: 1, hits: [hit('a', 20), hit('b', 5)] },
      { path: 'vector' as const, weight: 1, hits: [hit('b', 0.9), hit('a', 0.1)] },
    ];
    expect(fuse(lists, { method: 'rrf', k: 60, keep: 2 })).toEqual(fuseByRrf(lists, { k: 60, keep: 2 }));
    expect(fuse(lists, { method: 'relative-score', k: 60, keep: 2 })).toEqual(fuseByRelativeScore(lists, { keep: 2 }));
  });

  it('fusion - chunks of two knowledge bases that share a chunk id stay two candidates, each with its own scores', () => {
    // hr/handbook.md and it/handbook.md are both document `handbook`, so both chunks are `handbook#0`.
    const handbook = (kbId: string, score: number) => ({
      chunk: chunkOf({ docId: 'handbook', kbId, text: `${kbId} handbook` }),
      score,
    });
    const lists = [
      { path: 'bm25' as const, weight: 1, hits: [handbook('hr', 5), handbook('it', 4)] },
      { path: 'vector' as const, weight: 1, hits: [handbook('it', 0.9)] },
    ];
    for (const method of FUSION_METHODS) {
      const fused = fuse(lists, { method, k: 60, keep: 10 });
      const byKb = Object.fromEntries(
        fused.map(({ chunk, foundBy, bm25, vector }) => [chunk.kbId, { foundBy, bm25, vector }]),
      );
      expect(fused).toHaveLength(2);
      expect(byKb).toEqual({
        hr: { foundBy: 'BM25', bm25: 5, vector: undefined },
        it: { foundBy: 'HYBRID', bm25: 4, vector: 0.9 },
      });
    }
  });
});
