export { contentTerms, createTokenizer } from './tokenizer.js';
export type { Tokenizer, TokenizerOptions } from './tokenizer.js';
export { memoizeByText, memoizedTokenizer } from './memo.js';
export { containsStem, ENGLISH_STOP_WORDS, lightStem, sameStem, singular } from './english.js';
export { CHINESE_STOP_WORDS, hasHan, taggedWords, termSpecificity } from './chinese.js';
export type { TaggedWord } from './chinese.js';
export { fold, foldText, hashText, normalizeText } from './normalize.js';
export { approximateTokens } from './token-count.js';
