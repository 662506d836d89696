import type { Chunk__Output } from '@hopline/contracts';
import { claimStatedBy } from '@hopline/reasoning';

// "[1][2]" and "[1, 2]" cite one claim alike.
const CITATION_RUN = /\[\d+(?:\s*,\s*\d+)*\](?:\s*\[\d+(?:\s*,\s*\d+)*\])*/g;
// A sentence ends at . ! ? before whitespace (so "3.5" stays whole), or at a Chinese full stop.
const SENTENCE_END = /(?<=[.!?])\s+|(?<=[。！？])/;

export interface CitedClaim {
  claim: string;
  /** The evidence numbers its citation names. */
  cited: number[];
}

/**
 * The claims of a written answer and what each cites: the words before a citation, back to the
 * previous citation or the start of their sentence ("A [1]." and "A. [1]" both cite A).
 */
export function citedClaims(text: string): CitedClaim[] {
  const claims: CitedClaim[] = [];
  let start = 0;
  for (const match of text.matchAll(CITATION_RUN)) {
    const sentences = text.slice(start, match.index).split(SENTENCE_END);
    const last = sentences.at(-1) ?? '';
    const claim = last.trim() === '' ? (sentences.at(-2) ?? '') : last;
    claims.push({ claim: claim.trim(), cited: [...match[0].matchAll(/\d+/g)].map((number) => Number(number[0])) });
    start = match.index + match[0].length;
  }
  return claims;
}

/**
 * Citation support of an answer: of the cited claims the reasoning package's claim checker can
 * read (a claim with no name or number in it has nothing to check), how many the chunks they
 * cite state — the check synthesis itself applies before it sends a sentence.
 */
export function citationSupport(
  text: string,
  chunkOfCitation: (index: number) => Pick<Chunk__Output, 'title' | 'text'> | undefined,
): { checked: number; supported: number } {
  let checked = 0;
  let supported = 0;
  for (const { claim, cited } of citedClaims(text)) {
    const chunks = cited
      .map(chunkOfCitation)
      .filter((chunk): chunk is Pick<Chunk__Output, 'title' | 'text'> => chunk !== undefined);
    const stated = claimStatedBy(claim, chunks);
    if (stated === undefined) continue;
    checked += 1;
    if (stated) supported += 1;
  }
  return { checked, supported };
}
