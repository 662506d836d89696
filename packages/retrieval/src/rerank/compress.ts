import type { Chunk__Output } from '@hopline/contracts';
import { approximateTokens } from '@hopline/text';

export interface CompressionResult {
  chunks: Chunk__Output[];
  tokens: number;
  /** Chunks cut short (at most one) and chunks left out for lack of budget. */
  truncated: number;
  dropped: number;
}

/** Below this many tokens a truncated tail says too little to be worth its citation. */
const MIN_TAIL_TOKENS = 24;
const SENTENCE_END = /[.!?。！？](?=\s|$)|[。！？]/g;
const TOKEN = /[\u3400-\u9fff\uf900-\ufaff]|[\p{L}\p{N}]+/gu;

/**
 * Keeps chunks in rank order while they fit the token budget; the first one that does not fit
 * is cut at the last sentence end (else word end) inside the budget when enough budget is left,
 * and the rest are dropped. Chunks are values: a cut chunk is a copy with its span shortened.
 */
export function compressToBudget(
  chunks: readonly Chunk__Output[],
  tokenBudget: number,
  countTokens: (text: string) => number = approximateTokens,
): CompressionResult {
  const kept: Chunk__Output[] = [];
  let used = 0;
  let truncated = 0;
  for (const [index, chunk] of chunks.entries()) {
    const tokens = countTokens(chunk.text);
    if (used + tokens <= tokenBudget) {
      kept.push(chunk);
      used += tokens;
      continue;
    }
    const room = tokenBudget - used;
    if (room >= MIN_TAIL_TOKENS) {
      const cut = cutToTokens(chunk.text, room);
      if (cut.length > 0) {
        const start = chunk.span?.start ?? 0;
        kept.push({ ...chunk, text: cut, span: { start, end: start + cut.length } });
        used += countTokens(cut);
        truncated = 1;
      }
    }
    return { chunks: kept, tokens: used, truncated, dropped: chunks.length - index - truncated };
  }
  return { chunks: kept, tokens: used, truncated, dropped: 0 };
}

function cutToTokens(text: string, budget: number): string {
  let count = 0;
  let wordEnd = 0;
  for (const match of text.matchAll(TOKEN)) {
    if (count === budget) break;
    count++;
    wordEnd = match.index + match[0].length;
  }
  let sentenceEnd = 0;
  for (const match of text.slice(0, wordEnd + 1).matchAll(SENTENCE_END)) {
    if (match.index < wordEnd + 1) sentenceEnd = match.index + match[0].length;
  }
  return text.slice(0, sentenceEnd > 0 ? sentenceEnd : wordEnd).trimEnd();
}
