import { chunkMergeKey, type Chunk__Output } from '@hopline/contracts';
import { approximateTokens, contentTerms } from '@hopline/text';

const RRF_K = 60;

const keyOf = (chunk: Chunk__Output) => chunkMergeKey(chunk.kbId, chunk.dedupeKey || chunk.chunkId);

/**
 * The key evidence of several hops, most important first: every hop's first citation, then
 * every hop's second, and so on, so no hop's best evidence waits behind another's weaker ones.
 */
export function interleaveCitations(citedPerHop: readonly (readonly Chunk__Output[])[]): Chunk__Output[] {
  const ordered: Chunk__Output[] = [];
  const longest = Math.max(0, ...citedPerHop.map((cited) => cited.length));
  for (let rank = 0; rank < longest; rank += 1) {
    for (const cited of citedPerHop) {
      const chunk = cited[rank];
      if (chunk) ordered.push(chunk);
    }
  }
  return ordered;
}

/** Reciprocal-rank fusion of ranked lists (k = 60), merged by dedupe key. */
export function fuseRankedLists(lists: readonly (readonly Chunk__Output[])[]): Chunk__Output[] {
  const fused = new Map<string, { chunk: Chunk__Output; score: number }>();
  for (const list of lists) {
    list.forEach((chunk, index) => {
      const entry = fused.get(keyOf(chunk)) ?? { chunk, score: 0 };
      entry.score += 1 / (RRF_K + index + 1);
      fused.set(keyOf(chunk), entry);
    });
  }
  return [...fused.values()].sort((a, b) => b.score - a.score).map((entry) => entry.chunk);
}

const STANDS_OUT_RATIO = 2;

/**
 * Whether a ranking's best chunk stands out: its reranked score at least twice the runner-up's.
 * Scores read only where both are known and not negative (a reranker that fell back leaves the
 * fused order unscored; a cross-encoder's logits may be negative, and a ratio of those says
 * nothing): otherwise nothing stands out.
 */
export function bestStandsOut(ranking: readonly Chunk__Output[]): boolean {
  const best = ranking[0]?.scores?.rerank;
  const runnerUp = ranking[1]?.scores?.rerank;
  if (best === undefined || best <= 0) return false;
  if (runnerUp === undefined) return ranking.length === 1;
  return runnerUp >= 0 && best >= STANDS_OUT_RATIO * runnerUp;
}

/**
 * Ranked lists merged rank by rank, each list in turn, merged by dedupe key: every list gets an
 * equal share of the top, however much the others agree. The rankings of a parallel plan's
 * sub-questions are about different foci: a chunk that ranks middling for all of them (one
 * about the question's shared time frame) is about none, and summing its ranks as RRF does
 * pushes a focus's own chunk out of the top. A list marked `decided` (its focus's best chunk
 * stands out) takes its first turn and then every other one: its focus needs its best chunk,
 * and the slots it leaves go to the foci whose own chunk may still be further down.
 */
export function shareRankedLists(
  lists: readonly (readonly Chunk__Output[])[],
  decided: readonly boolean[] = [],
): Chunk__Output[] {
  const seen = new Set<string>();
  const merged: Chunk__Output[] = [];
  const taken = lists.map(() => 0);
  // A decided list takes half the turns: twice the rounds reach the end of every list.
  const rounds = 2 * Math.max(0, ...lists.map((list) => list.length));
  for (let round = 0; round < rounds; round += 1) {
    for (const [index, list] of lists.entries()) {
      if (decided[index] === true && round % 2 === 1) continue;
      const next = taken[index] ?? 0;
      taken[index] = next + 1;
      const chunk = list[next];
      if (!chunk || seen.has(keyOf(chunk))) continue;
      seen.add(keyOf(chunk));
      merged.push(chunk);
    }
  }
  return merged;
}

/** A ranking in two parts: the chunks that state some of its focus's own words, and the others. */
export interface SplitRanking {
  own: Chunk__Output[];
  other: Chunk__Output[];
}

/**
 * A parallel plan's rankings, each split into the chunks that state some of its focus's own
 * words and those that state none, in order otherwise. A focus's own words are those not every
 * sub-question shares: the sub-questions of "2031年6月，A和B分别参与了哪些会议？" share the
 * setting and the predicate, which a chunk about another party's meeting that month states as
 * well as one about A's, and rank it in every focus's list; it is about none of them. Where the
 * sub-questions share nothing, a focus's own words are all of its words; one focus alone has
 * none apart from the others', and keeps its whole ranking as its own.
 */
export function splitByOwnWords(
  rankings: readonly (readonly Chunk__Output[])[],
  foci: readonly string[],
): SplitRanking[] {
  const terms = foci.map((focus) => new Set(contentTerms(focus)));
  const shared = (term: string) => terms.every((focusTerms) => focusTerms.has(term));
  return rankings.map((ranking, index) => {
    const own = [...(terms[index] ?? [])].filter((term) => !shared(term));
    if (own.length === 0) return { own: [...ranking], other: [] };
    const statesOwn = (chunk: Chunk__Output) => {
      const stated = new Set(contentTerms(`${chunk.title} ${chunk.text}`));
      return own.some((term) => stated.has(term));
    };
    return { own: ranking.filter(statesOwn), other: ranking.filter((chunk) => !statesOwn(chunk)) };
  });
}

/**
 * Split rankings shared out own chunks first: every ranking's own, then every ranking's others.
 * A chunk one focus owns and another does not comes once, in its own place.
 */
export function ownChunksFirst(
  split: readonly SplitRanking[],
  share: (lists: readonly (readonly Chunk__Output[])[]) => Chunk__Output[],
): Chunk__Output[] {
  const own = share(split.map((part) => part.own));
  const placed = new Set(own.map(keyOf));
  return [...own, ...share(split.map((part) => part.other)).filter((chunk) => !placed.has(keyOf(chunk)))];
}

export interface EvidenceBudget {
  maxChunks: number;
  /** Approximate tokens of chunk text the list may hold. */
  tokenBudget: number;
}

/** A long chunk cut to the sentences that share most words with the question, in text order. */
function compressChunk(chunk: Chunk__Output, question: string, tokens: number): Chunk__Output {
  const wanted = new Set(contentTerms(question));
  const sentences = chunk.text.split(/(?<=[.!?。！？])\s+/).map((text, order) => ({
    text,
    order,
    overlap: contentTerms(text).filter((term) => wanted.has(term)).length,
    tokens: approximateTokens(text),
  }));
  const kept = new Set<number>();
  let used = 0;
  for (const sentence of [...sentences].sort((a, b) => b.overlap - a.overlap || a.order - b.order)) {
    if (used + sentence.tokens > tokens && kept.size > 0) continue;
    kept.add(sentence.order);
    used += sentence.tokens;
  }
  const text = sentences
    .filter((sentence) => kept.has(sentence.order))
    .map((sentence) => sentence.text)
    .join(' … ');
  // A chunk is a value: the compressed one is a copy.
  return { ...chunk, text };
}

/**
 * The evidence synthesis reads: the key evidence of the hops first, then the last hop's
 * ranked chunks; deduped; at most `maxChunks`, and chunks past the token budget compressed to
 * their most relevant sentences (an even share of what is left each) rather than dropped.
 */
export function selectEvidence(
  keyEvidence: readonly Chunk__Output[],
  ranked: readonly Chunk__Output[],
  question: string,
  budget: EvidenceBudget,
): Chunk__Output[] {
  const seen = new Set<string>();
  const picked: Chunk__Output[] = [];
  for (const chunk of [...keyEvidence, ...ranked]) {
    if (picked.length >= budget.maxChunks) break;
    if (seen.has(keyOf(chunk))) continue;
    seen.add(keyOf(chunk));
    picked.push(chunk);
  }
  let left = budget.tokenBudget;
  return picked.map((chunk, index) => {
    const share = Math.max(1, Math.floor(left / (picked.length - index)));
    const tokens = approximateTokens(chunk.text);
    const kept = tokens <= share ? chunk : compressChunk(chunk, question, share);
    left = Math.max(0, left - approximateTokens(kept.text));
    return kept;
  });
}
