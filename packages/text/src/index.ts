export { createTokenizer } from './tokenizer.js';
export type { Tokenizer, TokenizerOptions } from './tokenizer.js';
export { ENGLISH_STOP_WORDS, lightStem } from './english.js';
export { CHINESE_STOP_WORDS } from './chinese.js';
export { foldText, hashText, normalizeText } from './normalize.js';
export { approximateTokens } from './token-count.js';
