import { chunkMergeKey } from '@hopline/contracts';
import type { ScoredChunk } from '../backends/types.js';

export type SearchPath = 'bm25' | 'vector';

export interface RankedList {
  path: SearchPath;
  /** Multiplies this path's contributions. */
  weight: number;
  /** Best first. */
  hits: readonly ScoredChunk[];
}

export interface FusedCandidate {
  chunk: ScoredChunk['chunk'];
  /** The fused score the candidates are ordered by (the proto's `scores.rrf`, whichever method made it). */
  fused: number;
  bm25?: number;
  vector?: number;
  foundBy: 'BM25' | 'VECTOR' | 'HYBRID';
}

/**
 * How ranked lists become one:
 * - `rrf`: weighted reciprocal-rank fusion, Σ weight / (k + rank). Only ranks matter, so paths
 *   whose scores share no scale fuse without calibration; the right choice when both paths are
 *   strong. But every rank of a list pulls about as hard as its first (1/61 against 1/70 at
 *   k = 60), so a weak path's ranks 20–50, which are noise, still reorder the strong path's top.
 * - `relative-score`: each list's scores min-max scaled to [0, 1] over its own hits, weighted
 *   and summed (Weaviate's relativeScoreFusion; Elasticsearch's linear retriever with the
 *   minmax normaliser). A list's last hit scores 0, the same as a chunk it did not return, so
 *   its tail adds nothing, and score gaps survive: a list sure of its top keeps it. A weak
 *   path at a low weight then breaks near-ties and adds what it is most sure of, and no more.
 */
export type FusionMethod = (typeof FUSION_METHODS)[number];

export const FUSION_METHODS = ['rrf', 'relative-score'] as const;

export interface FusionOptions {
  method: FusionMethod;
  /** RRF damping constant; `relative-score` ignores it. */
  k: number;
  keep: number;
}

/** Fuses by `options.method`; see `FusionMethod`. Candidates are merged by kb id and `dedupeKey`. */
export function fuse(lists: readonly RankedList[], options: FusionOptions): FusedCandidate[] {
  return options.method === 'rrf' ? fuseByRrf(lists, options) : fuseByRelativeScore(lists, options);
}

/**
 * Weighted reciprocal-rank fusion: score = Σ weight / (k + rank), rank 1-based per path.
 * Within one list a repeated key keeps its best rank only.
 */
export function fuseByRrf(lists: readonly RankedList[], options: { k: number; keep: number }): FusedCandidate[] {
  return accumulate(lists, options.keep, (list) => (rank) => list.weight / (options.k + rank));
}

/**
 * Relative-score fusion: score = Σ weight × (score − min) / (max − min), min and max taken over
 * the list's own hits; a list whose hits all score alike gives each of them 1, and a candidate
 * a list did not return gets 0 from it. Within one list a repeated key keeps its first hit only.
 */
export function fuseByRelativeScore(lists: readonly RankedList[], options: { keep: number }): FusedCandidate[] {
  return accumulate(lists, options.keep, (list) => {
    let min = Infinity;
    let max = -Infinity;
    for (const hit of list.hits) {
      min = Math.min(min, hit.score);
      max = Math.max(max, hit.score);
    }
    const range = max - min;
    return (_rank, hit) => list.weight * (range > 0 ? (hit.score - min) / range : 1);
  });
}

type Contribution = (rank: number, hit: ScoredChunk) => number;

function accumulate(
  lists: readonly RankedList[],
  keep: number,
  contributionFor: (list: RankedList) => Contribution,
): FusedCandidate[] {
  const fused = new Map<string, FusedCandidate & { paths: Set<SearchPath> }>();
  for (const list of lists) {
    const contribution = contributionFor(list);
    const seen = new Set<string>();
    let rank = 0;
    for (const hit of list.hits) {
      const key = chunkMergeKey(hit.chunk.kbId, hit.chunk.dedupeKey);
      if (seen.has(key)) continue;
      seen.add(key);
      rank++;
      let candidate = fused.get(key);
      if (!candidate) {
        candidate = { chunk: hit.chunk, fused: 0, foundBy: list.path === 'bm25' ? 'BM25' : 'VECTOR', paths: new Set() };
        fused.set(key, candidate);
      }
      candidate.fused += contribution(rank, hit);
      candidate[list.path] = hit.score;
      candidate.paths.add(list.path);
    }
  }
  const ranked = [...fused.values()].sort((a, b) => b.fused - a.fused).slice(0, Math.max(0, keep));
  return ranked.map(({ paths, ...candidate }) => ({
    ...candidate,
    foundBy: paths.size > 1 ? 'HYBRID' : candidate.foundBy,
  }));
}
