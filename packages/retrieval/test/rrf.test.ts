import { describe, expect, it } from 'vitest';
import { fuseByRrf } from '../src/index.js';
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
    expect(b?.rrf).toBeCloseTo(1 / 62 + 2 / 61, 10);
    expect(b).toMatchObject({ foundBy: 'HYBRID', bm25: 5, vector: 0.9 });
    expect(fused[1]).toMatchObject({ foundBy: 'VECTOR', vector: 0.8 });
    expect(fused[1]?.bm25).toBeUndefined();
    expect(fused[2]).toMatchObject({ foundBy: 'BM25', bm25: 9 });
  });

  it('rrf - keeps only the requested number of candidates', () => {
    const fused = fuseByRrf([{ path: 'bm25', weight: 1, hits: ['a', 'b', 'c'].map((id, i) => hit(id, 3 - i)) }], { k: 60, keep: 2 });
    expect(fused.map((c) => c.chunk.docId)).toEqual(['a', 'b']);
  });

  it('rrf - duplicates by dedupe key count once, at their best rank', () => {
    const duplicate = { chunk: { ...chunkOf({ docId: 'x', text: 'same' }), chunkId: 'other', dedupeKey: 'a#0' }, score: 1 };
    const fused = fuseByRrf([{ path: 'bm25', weight: 1, hits: [hit('a', 3), duplicate, hit('b', 1)] }], { k: 60, keep: 10 });
    expect(fused.map((c) => c.chunk.dedupeKey)).toEqual(['a#0', 'b#0']);
    expect(fused[1]?.rrf).toBeCloseTo(1 / 62, 10);
  });
});
