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
