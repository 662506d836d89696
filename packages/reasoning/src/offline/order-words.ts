import type { TaggedWord } from '@hopline/text';
import { taggedWords } from '@hopline/text';

/**
 * How Chinese asks which of several things came first or last, read on the words jieba
 * segments: a word of order ("先", "更早", "较晚") after an interrogative ("哪个", "谁") or after
 * the second option of a choice ("A还是B先发生"). Words that only hold the character ("领先",
 * "首先", "迟到", "晚期", "早餐") are words of their own, so they ask no order.
 */

type End = 'earlier' | 'later';

const ORDER_WORDS = new Map<string, End>([
  ...['先', '早', '最先', '率先', '更早', '较早', '最早', '早些', '早于', '先于', '在先', '在前'].map(
    (word) => [word, 'earlier'] as const,
  ),
  ...['晚', '迟', '更晚', '较晚', '最晚', '晚些', '晚于', '更迟', '较迟', '最迟', '迟于', '在后'].map(
    (word) => [word, 'later'] as const,
  ),
]);
// A degree adverb the segmenter leaves apart from the word of order after it ("更/早").
const DEGREE_WORDS = new Set(['更', '较', '最', '比较']);
// An interrogative asks the order only when the word of order stands close after it, in its clause.
const NEAR = 8;
const CHOICE_NEAR = 40;
const CLAUSE_END = /[，,：:；;？?。！!]/;

/** The end a word of order (or a degree adverb before one) at `index` asks for. */
function orderAt(words: readonly TaggedWord[], index: number): End | undefined {
  const word = (words[index] as TaggedWord).word;
  const next = words[index + 1]?.word ?? '';
  return ORDER_WORDS.get(word) ?? (DEGREE_WORDS.has(word) ? ORDER_WORDS.get(next) : undefined);
}

/** The index of the first word of order after `from` in its clause, within `near` characters; -1 if none. */
function orderAfter(words: readonly TaggedWord[], from: number, near: number): number {
  const end = (words[from] as TaggedWord).end;
  for (let index = from + 1; index < words.length; index += 1) {
    const word = words[index] as TaggedWord;
    if (CLAUSE_END.test(word.word) || word.start - end > near) return -1;
    if (orderAt(words, index)) return index;
  }
  return -1;
}

/** Where a choice with no interrogative ("A还是B先发生") starts asking the order; -1 if it does not. */
export function choiceOrderAt(words: readonly TaggedWord[]): number {
  const choice = words.findLastIndex((word) => word.word === '还是');
  if (choice < 0) return -1;
  // The second option stands between "还是" and the word of order.
  return orderAfter(words, choice + 1, CHOICE_NEAR);
}

/**
 * Whether the words at `index` ask the order of all ("先后顺序", "先后/次序"); the adverb "先后"
 * ("他先后访问了…", one after the other) asks nothing.
 */
export const asksSequence = (words: readonly TaggedWord[], index: number): boolean =>
  /^先后(?:顺序|次序)/.test(`${(words[index] as TaggedWord).word}${words[index + 1]?.word ?? ''}`);

const isInterrogative = (word: TaggedWord) => /^[哪谁孰]/.test(word.word) && !word.tag.startsWith('n');

/** The end a Chinese question asks for with an interrogative or a choice and a word of order. */
export function chineseOrderAsked(question: string): End | undefined {
  const words = taggedWords(question);
  for (const [index, word] of words.entries()) {
    if (!isInterrogative(word)) continue;
    const at = orderAfter(words, index, NEAR);
    if (at >= 0) return orderAt(words, at);
  }
  const choice = choiceOrderAt(words);
  return choice >= 0 ? orderAt(words, choice) : undefined;
}
