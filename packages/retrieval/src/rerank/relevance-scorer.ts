import { createTokenizer, memoizedTokenizer } from '@hopline/text';

/**
 * The tokenizer reranking uses unless given another: one for the process, remembering recent
 * texts, so that a chunk scored by the lexical scorer is not segmented again for MMR, nor
 * again when a later question reranks it.
 */
export const rerankTokenizer = memoizedTokenizer(createTokenizer());

/** The reranking port: scores candidate texts against a query, higher is more relevant. */
export interface RelevanceScorer {
  /** Names the scorer in responses ("cross-encoder:bge-reranker-base", "lexical"). */
  readonly name: string;
  /** One score per text, in input order. */
  score(query: string, texts: readonly string[], signal: AbortSignal): Promise<number[]>;
}

/** The text a chunk is scored as: its title names what the passage is about. */
export function rerankText(chunk: { title: string; text: string }): string {
  return chunk.title ? `${chunk.title}\n${chunk.text}` : chunk.text;
}
