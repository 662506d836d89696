import type { Tokenizer } from './tokenizer.js';

/**
 * A tokenizer that remembers the tokens of the last `maxTexts` texts it was given. Segmenting
 * (jieba for Chinese, the word pattern and the stemmer for the rest) is the costliest step of
 * reranking and of the offline reasoning, and a question reads the same chunks several times:
 * the scorer and MMR of one rerank, then the hops after it; popular chunks recur across
 * questions. Each caller gets its own copy of the tokens.
 */
export function memoizedTokenizer(tokenizer: Tokenizer, maxTexts = 4_096): Tokenizer {
  const remembered = new Map<string, readonly string[]>();
  return {
    tokenize(text) {
      let tokens = remembered.get(text);
      if (tokens === undefined) {
        tokens = tokenizer.tokenize(text);
        // A Map keeps insertion order: past the limit the text remembered longest ago goes first.
        if (remembered.size >= maxTexts) remembered.delete(remembered.keys().next().value as string);
      } else {
        remembered.delete(text);
      }
      remembered.set(text, tokens);
      return [...tokens];
    },
  };
}
