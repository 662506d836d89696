import type { TaggedWord } from '@hopline/text';
import { taggedWords } from '@hopline/text';

/**
 * How Chinese asks which of several things came first or last, read on the words jieba
 * segments: a word of order ("先", "更早", "较晚") after an interrogative ("哪个", "谁") or after
 * the second option of a choice ("A还是B先发生"). Words that only hold the character ("领先",
 * "首先", "迟到", "晚期", "早餐") are words of their own, so they ask no order.
 */

export type End = 'earlier' | 'later';

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

// What makes a statement a yes/no question: a final particle ("…吗？") or an adverb that asks
// whether ("是否", "是不是").
const JUDGEMENT_PARTICLES = new Set(['吗', '么', '嘛']);
export const JUDGEMENT_ADVERBS = new Set(['是否', '是不是']);
// Postpositions that place one event before or after another named before them ("在B之前").
const RELATIVE_PLACES = new Map<string, End>([
  ['之前', 'earlier'],
  ['以前', 'earlier'],
  ['之后', 'later'],
  ['以后', 'later'],
]);
const asksWhether = (word: TaggedWord) => JUDGEMENT_PARTICLES.has(word.word) || JUDGEMENT_ADVERBS.has(word.word);
// What may close a judgement after "在B之前": "发生的吗". Any other word makes "在B之前" a time
// adverbial of another predicate ("在比赛之前是否进行了训练"), which judges no order.
const CLOSING_WORDS = new Set(['发生', '举行', '举办', '的', '了', '呢']);
const closesJudgement = (words: readonly TaggedWord[], from: number) =>
  words
    .slice(from + 1)
    .every((word) => CLAUSE_END.test(word.word) || asksWhether(word) || CLOSING_WORDS.has(word.word));

/**
 * Where a yes/no question states that one thing came before or after another, as character
 * offsets: the first thing ends at `firstEnd`, the second spans `secondStart`..`secondEnd`, and
 * `end` is where the first is said to stand.
 */
export interface JudgedOrder {
  firstEnd: number;
  secondStart: number;
  secondEnd: number;
  end: End;
}

/** The offset where the clause, or the asking, after word `from` ends. */
function askingEnd(words: readonly TaggedWord[], from: number): number {
  const close = words.find((word, at) => at > from && (CLAUSE_END.test(word.word) || asksWhether(word)));
  return close?.start ?? Number.POSITIVE_INFINITY;
}

/**
 * The order a yes/no question judges ("A比B(更)早吗", "A是否早于B", "A是在B之前发生的吗"): "比"
 * before the second thing and a word of order after it ("比" may open a word the segmenter did
 * not know, "比耶伦", never one it knows, "比赛"); a word of order with "于" before the second
 * thing ("早/于"); or "在…之前/之后" around it. Undefined for a question that asks which ("哪个更
 * 早"): that names one, it judges nothing.
 */
export function judgedOrder(words: readonly TaggedWord[]): JudgedOrder | undefined {
  if (words.some(isInterrogative) || !words.some(asksWhether)) return undefined;
  for (const [index, word] of words.entries()) {
    if (word.word === '比' || (word.tag === 'x' && word.word.startsWith('比'))) {
      const at = orderAfter(words, index, CHOICE_NEAR);
      const end = at >= 0 ? orderAt(words, at) : undefined;
      if (end)
        return { firstEnd: word.start, secondStart: word.start + 1, secondEnd: (words[at] as TaggedWord).start, end };
      continue;
    }
    const end = DEGREE_WORDS.has(word.word) ? undefined : ORDER_WORDS.get(word.word);
    if (end && (word.word.endsWith('于') || words[index + 1]?.word === '于')) {
      const secondStart = word.word.endsWith('于') ? word.end : (words[index + 1] as TaggedWord).end;
      return { firstEnd: word.start, secondStart, secondEnd: askingEnd(words, index), end };
    }
    const place = RELATIVE_PLACES.get(word.word);
    const at = words.findLastIndex(
      (before, position) => position < index && (before.word === '在' || before.word === '于'),
    );
    if (place && at >= 0 && closesJudgement(words, index)) {
      const preposition = words[at] as TaggedWord;
      return { firstEnd: preposition.start, secondStart: preposition.end, secondEnd: word.start, end: place };
    }
  }
  return undefined;
}
