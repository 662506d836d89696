import type { Chunk__Output } from '@hopline/contracts';
import { CancelledError, ValidationError, toHoplineError } from '@hopline/contracts';
import { instrument, spansRecorded } from '@hopline/telemetry';
import { trace } from '@opentelemetry/api';
import { memoizeByText, type Tokenizer } from '@hopline/text';
import { NEVER_ABORTED, type Guard } from '../hybrid/guard.js';
import { compressToBudget } from './compress.js';
import { jaccard, minMaxScale, selectByMmr } from './mmr.js';
import type { RelevanceScorer } from './relevance-scorer.js';
import { rerankText, rerankTokenizer } from './relevance-scorer.js';

export interface RerankDefaults {
  /** Chunks kept after scoring (default 8). */
  keep: number;
  /** Chunks kept after MMR (default 6). */
  mmrKeep: number;
  /** MMR trade-off, 1 = relevance only (default 0.7). */
  lambda: number;
  /** Token budget of what is returned (default 3000). */
  tokenBudget: number;
}

export const DEFAULT_RERANK: RerankDefaults = { keep: 8, mmrKeep: 6, lambda: 0.7, tokenBudget: 3000 };

export interface RerankerDependencies {
  /** The primary scorer, typically a cross-encoder client. */
  scorer: RelevanceScorer;
  /**
   * Protects calls to the primary scorer: deadline and breaker for a cross-encoder,
   * `inProcessGuard` for a scorer that works in the process (the lexical one), which only
   * refuses a call made late or cancelled.
   */
  guard: Guard;
  /** Ranks when the primary fails; runs locally, unguarded. Absent: the failure propagates. */
  fallback?: RelevanceScorer;
  defaults?: Partial<RerankDefaults>;
  /** Terms for MMR's similarity (default: the retrieval tokenizer). */
  tokenizer?: Tokenizer;
}

export interface RerankInput {
  query: string;
  chunks: readonly Chunk__Output[];
  /** Chunks kept after scoring; 0 or absent takes the default. */
  topN?: number;
  /** 0 or absent takes the default. */
  tokenBudget?: number;
  deadlineUnixMs: number;
  signal?: AbortSignal;
}

export interface RerankOutput {
  chunks: Chunk__Output[];
  /** Where each of `chunks` was in the input's chunks: a caller that kept them needs no copy back. */
  positions: number[];
  /** True when the primary scorer did not answer and the fallback ranked instead. */
  fallback: boolean;
  fallbackReason: string;
  /** The scorer that produced the `rerank` scores. */
  scorer: string;
}

export interface Reranker {
  rerank(input: RerankInput): Promise<RerankOutput>;
}

/**
 * Score → keep the best `keep` → MMR down to `mmrKeep` → compress to the token budget.
 * Each chunk comes back as a copy with `scores.rerank` set; earlier stage scores are kept.
 */
export function createReranker(dependencies: RerankerDependencies): Reranker {
  const defaults = { ...DEFAULT_RERANK, ...dependencies.defaults };
  const tokenizer = dependencies.tokenizer ?? rerankTokenizer;
  // MMR compares the term sets of the same popular chunks in question after question.
  const termSet = memoizeByText((text): ReadonlySet<string> => new Set(tokenizer.tokenize(text)));

  async function score(
    input: RerankInput,
    texts: string[],
  ): Promise<{ scores: number[]; scorer: string; fallbackReason: string }> {
    const { guard, scorer } = dependencies;
    try {
      const scores = await guard.call((signal) => scorer.score(input.query, texts, signal), {
        deadlineUnixMs: input.deadlineUnixMs,
        ...(input.signal ? { signal: input.signal } : {}),
      });
      return { scores, scorer: scorer.name, fallbackReason: '' };
    } catch (error) {
      if (input.signal?.aborted) throw new CancelledError('rerank cancelled by the caller', { cause: error });
      if (!dependencies.fallback) throw error;
      const failure = toHoplineError(error);
      const scores = await dependencies.fallback.score(input.query, texts, input.signal ?? NEVER_ABORTED);
      return {
        scores,
        scorer: dependencies.fallback.name,
        fallbackReason: `${dependencies.scorer.name} failed (${failure.code}): ${failure.message}`,
      };
    }
  }

  return {
    async rerank(input) {
      if (!input.query.trim()) throw new ValidationError('rerank query is empty');
      if (input.chunks.length === 0)
        return { chunks: [], positions: [], fallback: false, fallbackReason: '', scorer: dependencies.scorer.name };
      const texts = input.chunks.map(rerankText);
      const scored = await instrument(
        'rerank score',
        {
          attributes: {
            'hopline.rerank.candidates': texts.length,
            'hopline.breaker.state': dependencies.guard.state ?? 'none',
          },
        },
        async (span) => {
          const result = await score(input, texts);
          span.setAttributes({
            'hopline.rerank.scorer': result.scorer,
            'hopline.degraded': result.fallbackReason !== '',
          });
          if (result.fallbackReason) span.setAttribute('hopline.degraded_reasons', [result.fallbackReason]);
          return result;
        },
      );
      if (scored.scores.length !== texts.length) {
        throw new ValidationError(
          `scorer ${scored.scorer} returned ${scored.scores.length} scores for ${texts.length} texts`,
        );
      }
      const keep = input.topN && input.topN > 0 ? input.topN : defaults.keep;
      const relevance = minMaxScale(scored.scores);
      const ranked = input.chunks
        .map((chunk, index) => ({
          chunk: { ...chunk, scores: { ...chunk.scores, rerank: scored.scores[index] as number } },
          index,
          text: texts[index] as string,
          relevance: relevance[index] as number,
        }))
        .sort((a, b) => b.relevance - a.relevance)
        .slice(0, keep);
      const terms = new Map(ranked.map(({ chunk, text }) => [chunk, termSet(text)]));
      const diverse = mmrSpan(ranked.length, () =>
        selectByMmr(
          ranked.map(({ chunk, relevance: scaled }) => ({ item: chunk, relevance: scaled })),
          {
            lambda: defaults.lambda,
            keep: Math.min(defaults.mmrKeep, keep),
            similarity: (a, b) => jaccard(terms.get(a) as ReadonlySet<string>, terms.get(b) as ReadonlySet<string>),
          },
        ),
      );
      const budget = input.tokenBudget && input.tokenBudget > 0 ? input.tokenBudget : defaults.tokenBudget;
      const compressed = compressToBudget(diverse, budget);
      // What compression keeps is a prefix of what MMR chose, its last chunk perhaps cut short.
      const positionOf = new Map(ranked.map(({ chunk, index }) => [chunk, index]));
      return {
        chunks: compressed.chunks,
        positions: diverse.slice(0, compressed.chunks.length).map((chunk) => positionOf.get(chunk) as number),
        fallback: scored.fallbackReason !== '',
        fallbackReason: scored.fallbackReason,
        scorer: scored.scorer,
      };
    },
  };
}

/**
 * MMR is synchronous: its span is opened and ended around the one call. Where spans are not
 * recorded it opens none, as `instrument` does: an unrecorded span here would carry nothing to
 * anyone, and a reranker pays for it on every call.
 */
function mmrSpan<T>(candidates: number, select: () => T[]): T[] {
  if (!spansRecorded()) return select();
  const span = trace.getTracer('hopline').startSpan('mmr', { attributes: { 'hopline.mmr.candidates': candidates } });
  try {
    const selected = select();
    span.setAttribute('hopline.mmr.kept', selected.length);
    return selected;
  } finally {
    span.end();
  }
}
