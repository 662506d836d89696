export interface MmrOptions<T> {
  /** 1 = relevance only, 0 = diversity only (default 0.7). */
  lambda: number;
  keep: number;
  /** Similarity of two items in [0, 1]. */
  similarity: (a: T, b: T) => number;
}

/**
 * Scales scores to [0, 1] (all equal → all 1), so that MMR's λ trades relevance against
 * similarity on the same scale whatever the scorer's (logits, probabilities, BM25).
 */
export function minMaxScale(values: readonly number[]): number[] {
  if (values.length === 0) return [];
  const min = Math.min(...values);
  const span = Math.max(...values) - min;
  return values.map((value) => (span === 0 ? 1 : (value - min) / span));
}

/**
 * Maximal marginal relevance: repeatedly takes the item with the best
 * λ·relevance − (1−λ)·(max similarity to what is already taken). Relevance is expected in
 * [0, 1] (see `minMaxScale`), scaled over the whole candidate set the scorer saw.
 */
export function selectByMmr<T>(candidates: ReadonlyArray<{ item: T; relevance: number }>, options: MmrOptions<T>): T[] {
  if (!(options.lambda >= 0 && options.lambda <= 1))
    throw new RangeError(`MMR lambda must be in [0, 1], got ${options.lambda}`);
  const keep = Math.min(options.keep, candidates.length);
  if (keep <= 0) return [];
  const relevance = candidates.map((candidate) => candidate.relevance);
  const remaining = candidates.map((_, index) => index);
  const maxSimilarity = candidates.map(() => 0);
  const chosen: T[] = [];
  while (chosen.length < keep) {
    let bestAt = 0;
    let bestValue = Number.NEGATIVE_INFINITY;
    remaining.forEach((index, at) => {
      const value =
        options.lambda * (relevance[index] as number) - (1 - options.lambda) * (maxSimilarity[index] as number);
      if (value > bestValue) {
        bestValue = value;
        bestAt = at;
      }
    });
    const [picked] = remaining.splice(bestAt, 1) as [number];
    const item = (candidates[picked] as { item: T }).item;
    chosen.push(item);
    for (const index of remaining) {
      const similarity = options.similarity((candidates[index] as { item: T }).item, item);
      if (similarity > (maxSimilarity[index] as number)) maxSimilarity[index] = similarity;
    }
  }
  return chosen;
}

/** Jaccard similarity of two term sets: cheap, and enough to see near-duplicate passages. */
export function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 && b.size === 0) return 0;
  let shared = 0;
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  for (const term of small) if (large.has(term)) shared++;
  return shared / (a.size + b.size - shared);
}
