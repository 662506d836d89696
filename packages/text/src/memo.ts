import type { Tokenizer } from './tokenizer.js';

/**
 * `analyze` remembered for recent texts: a question reads the same chunks several times (the
 * scorer and MMR of one rerank, then the hops after it) and popular chunks recur across questions.
 * Every caller gets the same result, so results are read-only.
 *
 * Two generations of `maxTexts / 2` texts each: a text found in the newer one costs one lookup
 * and no reordering (most calls are such hits: moving each to the end of one map was most of the
 * memo's cost); one found in the older one moves to the newer; when the newer is full, the older
 * is dropped. So a text used within the last `maxTexts / 2` new texts is always kept, and no more
 * than `maxTexts` are.
 */
export function memoizeByText<T>(analyze: (text: string) => T, maxTexts = 4_096): (text: string) => T {
  const generation = Math.max(1, Math.floor(maxTexts / 2));
  let newer = new Map<string, T>();
  let older = new Map<string, T>();
  return (text) => {
    let result = newer.get(text);
    if (result !== undefined) return result;
    result = older.get(text) ?? analyze(text);
    if (newer.size >= generation) {
      older = newer;
      newer = new Map();
    }
    newer.set(text, result);
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
  return {
    tokenize: memoizeByText((text) => Object.freeze(tokenizer.tokenize(text)), maxTexts),
    version: tokenizer.version,
  };
}
