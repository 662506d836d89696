import type { Tokenizer } from './tokenizer.js';

/**
 * `analyze` remembered for the last `maxTexts` texts it was given: a question reads the same
 * chunks several times (the scorer and MMR of one rerank, then the hops after it) and popular
 * chunks recur across questions. Every caller gets the same result, so results are read-only.
 */
export function memoizeByText<T>(analyze: (text: string) => T, maxTexts = 4_096): (text: string) => T {
  const remembered = new Map<string, T>();
  return (text) => {
    let result = remembered.get(text);
    if (result === undefined) {
      result = analyze(text);
      // A Map keeps insertion order: past the limit the text remembered longest ago goes first.
      if (remembered.size >= maxTexts) remembered.delete(remembered.keys().next().value as string);
    } else {
      remembered.delete(text);
    }
    remembered.set(text, result);
    return result;
  };
}

/**
 * A tokenizer that remembers the tokens of recent texts. Segmenting (jieba for Chinese, the word
 * pattern and the stemmer for the rest) is the costliest step of reranking and of the offline
 * reasoning. Every caller gets the same tokens, frozen: a copy per call cost as much as the
 * lookup saved on the shortest texts.
 */
export function memoizedTokenizer(tokenizer: Tokenizer, maxTexts = 4_096): Tokenizer {
  return { tokenize: memoizeByText((text) => Object.freeze(tokenizer.tokenize(text)), maxTexts) };
}
