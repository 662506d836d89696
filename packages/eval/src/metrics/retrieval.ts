export interface RetrievalScore {
  gold: number;
  found: number;
  /** Every gold document is in the top k. */
  chainComplete: boolean;
  /** 1 / the rank of the first chunk of a gold document within the top k; 0 when none is. */
  reciprocalRank: number;
}

/** A document is found when any chunk of it is among the first k chunks. */
export function scoreRetrieval(
  goldDocIds: readonly string[],
  rankedDocIds: readonly string[],
  k: number,
): RetrievalScore {
  const top = rankedDocIds.slice(0, k);
  const gold = new Set(goldDocIds);
  const inTop = new Set(top);
  let found = 0;
  for (const docId of gold) if (inTop.has(docId)) found++;
  const firstGold = top.findIndex((docId) => gold.has(docId));
  return {
    gold: gold.size,
    found,
    chainComplete: gold.size > 0 && found === gold.size,
    reciprocalRank: firstGold < 0 ? 0 : 1 / (firstGold + 1),
  };
}

export interface HopPath {
  /** For each n from 1 to the number of gold documents: whether hop n held up (see `hopPath`). */
  held: boolean[];
  /** The first hop that did not hold, or 0 when every one did. */
  breakPoint: number;
}

/**
 * How far the chain held, hop by hop, from the documents each hop kept. When the gold order is
 * the hop order (MuSiQue), hop n holds when it retrieved gold document n. Otherwise (HotpotQA,
 * 2Wiki, ChronoQA: gold documents in no hop order, or foci fanned out at once) hop n holds when
 * hops 1..n together retrieved at least n of the gold documents: the chain has as many links
 * as hops, and a hop the loop never ran holds only when the hops that ran had already retrieved
 * n (the chain needed fewer hops: one search found both of a comparison's documents). Under the
 * hop order, a hop never run does not hold. Hops past the number of gold documents are not
 * judged.
 */
export function hopPath(
  goldDocIds: readonly string[],
  hopOrdered: boolean,
  hopDocIds: ReadonlyArray<readonly string[]>,
): HopPath {
  const found = new Set<string>();
  const held = goldDocIds.map((gold, index) => {
    const hop = hopDocIds[index];
    if (hopOrdered) return hop?.includes(gold) ?? false;
    for (const docId of hop ?? []) if (goldDocIds.includes(docId)) found.add(docId);
    return found.size >= index + 1;
  });
  const broken = held.indexOf(false);
  return { held, breakPoint: broken < 0 ? 0 : broken + 1 };
}
