import { hasHan } from './chinese.js';

// The words a sentence is built with rather than what it names: a Chinese name inside an English
// question ("Who leads 天穹项目?") holds none of the English ones, an English name inside a
// Chinese question ("Project Atlas是哪年启动的？") none of the Chinese ones.
const ENGLISH_FRAME =
  /\b(?:a|an|the|of|in|on|at|to|for|by|with|from|and|or|is|are|was|were|do|does|did|has|have|had|who|whom|whose|what|which|when|where|why|how)\b/gi;
const CHINESE_FRAME = /[的是了在和与吗呢哪谁么几]/gu;

/**
 * Whether a text is written in Chinese: it has Han characters and no more of English's frame
 * words than of Chinese's. Decides the language an answer is written in and which words a
 * document can be expected to state in its own words.
 */
export function writtenInChinese(text: string): boolean {
  if (!hasHan(text)) return false;
  const english = text.match(ENGLISH_FRAME)?.length ?? 0;
  const chinese = text.match(CHINESE_FRAME)?.length ?? 0;
  return chinese >= english;
}
