import type { ScoredChunk } from '../backends/types.js';

export type SearchPath = 'bm25' | 'vector';

export interface RankedList {
  path: SearchPath;
  /** Multiplies this path's reciprocal-rank contributions. */
  weight: number;
  /** Best first. */
  hits: readonly ScoredChunk[];
}

export interface FusedCandidate {
  chunk: ScoredChunk['chunk'];
  rrf: number;
  bm25?: number;
  vector?: number;
  foundBy: 'BM25' | 'VECTOR' | 'HYBRID';
}

/**
 * Weighted reciprocal-rank fusion: score = Σ weight / (k + rank), rank 1-based per path.
 * Only ranks matter, so BM25 scores and cosines need no common scale. Candidates are merged by
 * `dedupeKey`; within one list a repeated key keeps its best rank only.
 */
export function fuseByRrf(lists: readonly RankedList[], options: { k: number; keep: number }): FusedCandidate[] {
  const fused = new Map<string, FusedCandidate & { paths: Set<SearchPath> }>();
  for (const list of lists) {
    const seen = new Set<string>();
    let rank = 0;
    for (const hit of list.hits) {
      const key = hit.chunk.dedupeKey;
      if (seen.has(key)) continue;
      seen.add(key);
      rank++;
      let candidate = fused.get(key);
      if (!candidate) {
        candidate = { chunk: hit.chunk, rrf: 0, foundBy: list.path === 'bm25' ? 'BM25' : 'VECTOR', paths: new Set() };
        fused.set(key, candidate);
      }
      candidate.rrf += list.weight / (options.k + rank);
      candidate[list.path] = hit.score;
      candidate.paths.add(list.path);
    }
  }
  const ranked = [...fused.values()].sort((a, b) => b.rrf - a.rrf).slice(0, Math.max(0, options.keep));
  return ranked.map(({ paths, ...candidate }) => ({
    ...candidate,
    foundBy: paths.size > 1 ? 'HYBRID' : candidate.foundBy,
  }));
}
