import { hasHan } from '@hopline/text';

/**
 * Answer scores. English answers as HotpotQA's evaluation script scores them: lower-cased,
 * stripped of punctuation and of the articles a/an/the, compared as whole strings (EM) or as
 * bags of words (F1); "yes", "no" and "noanswer" only ever match themselves. Where either side
 * is Chinese, the bag holds characters (each Han character one token, a run of Latin letters
 * or digits one token), as Chinese reading-comprehension benchmarks score. A Chinese gold
 * answer that is a yes/no judgement (是, 是的, 对, 不是, 否, 不…) is matched by the judgement the
 * prediction opens with, whatever words follow it, unless the opening only shares its first
 * character (不确定, 没有找到, 是否, 对于…); English yes/no stays HotpotQA's exact match.
 */

const PUNCTUATION = /[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~‘’“”–—]/g;
const ARTICLES = /\b(a|an|the)\b/g;
const SPECIAL = new Set(['yes', 'no', 'noanswer']);

export type Judgement = 'yes' | 'no';

// A whole answer that is only a judgement, once punctuation and spacing are gone.
const YES_ANSWER = /^(?:是|是的|对|对的|正确)$/;
const NO_ANSWER = /^(?:否|不|不是|不对|错|没有)$/;
// The judgement a written answer opens with; negations first, so that 不是 is not read as 是,
// but after the affirmations a negation opens ("没错", "不错": that is right).
const OPENS_NEGATED_YES = /^(?:没错|不错)/;
const OPENS_NO = /^(?:否|不|没|错)/;
const OPENS_YES = /^(?:是|对|正确)/;
// Openings that share a judgement's first character but judge nothing: a hedge ("不确定…",
// "无法…", "没有找到…"), a question put back ("是否…"), or another word ("对于…", "对不起", "否则…").
const OPENS_NO_JUDGEMENT =
  /^(?:不确定|不清楚|不知道|不能确定|不好说|没有找到|没找到|没有足够|没有相关|是否|对于|对比|对不起|否则)/;

const bare = (text: string) => text.replace(/[\s\p{P}\p{S}]+/gu, '');

/** The judgement a gold answer is, or undefined when it names something instead. */
export function goldJudgement(answer: string): Judgement | undefined {
  const text = bare(answer);
  if (YES_ANSWER.test(text)) return 'yes';
  if (NO_ANSWER.test(text)) return 'no';
  return undefined;
}

/** The judgement a predicted answer opens with, if it opens with one. */
export function openingJudgement(prediction: string): Judgement | undefined {
  const text = prediction.replace(/^[\s\p{P}\p{S}]+/u, '');
  if (OPENS_NO_JUDGEMENT.test(text)) return undefined;
  if (OPENS_NEGATED_YES.test(text)) return 'yes';
  if (OPENS_NO.test(text)) return 'no';
  if (OPENS_YES.test(text)) return 'yes';
  return undefined;
}

/** Whether a gold answer is a yes/no judgement, in Chinese or English. */
export function isJudgement(gold: string): boolean {
  return goldJudgement(gold) !== undefined || /^(?:yes|no)$/.test(normalizeAnswer(gold));
}

// A question that asks which of the things it names came first or last: a Chinese comparative of
// time (早, 晚, 迟, 先 but not 先生 "Mr."), or an English one between options joined by "or".
const ASKS_ORDER_HAN = /早|晚|迟|先(?!生)/;
const ASKS_ORDER_LATIN = /\b(?:first|earlier|earliest|later|latest|older|oldest|younger|youngest)\b/i;

/** Whether a question asks which of the things it names came first or last (in time or age). */
export function asksOrder(question: string): boolean {
  return ASKS_ORDER_HAN.test(question) || (ASKS_ORDER_LATIN.test(question) && /\bor\b/i.test(question));
}

export function normalizeAnswer(text: string): string {
  return text.toLowerCase().replace(PUNCTUATION, '').replace(ARTICLES, ' ').split(/\s+/).filter(Boolean).join(' ');
}

/** Each Han character, and each run of other letters or digits, lower-cased; punctuation dropped. */
export function characterTokens(text: string): string[] {
  return text.toLowerCase().match(/\p{Script=Han}|[^\p{Script=Han}\p{P}\p{S}\s]+/gu) ?? [];
}

function overlapF1(predicted: readonly string[], expected: readonly string[]): number {
  const counts = new Map<string, number>();
  for (const token of expected) counts.set(token, (counts.get(token) ?? 0) + 1);
  let common = 0;
  for (const token of predicted) {
    const left = counts.get(token) ?? 0;
    if (left > 0) {
      common += 1;
      counts.set(token, left - 1);
    }
  }
  if (common === 0) return 0;
  const precision = common / predicted.length;
  const recall = common / expected.length;
  return (2 * precision * recall) / (precision + recall);
}

export interface AnswerScore {
  em: boolean;
  f1: number;
}

export function scoreAnswer(prediction: string, gold: string): AnswerScore {
  const judgement = goldJudgement(gold);
  if (judgement) {
    const right = openingJudgement(prediction) === judgement;
    return { em: right, f1: right ? 1 : 0 };
  }
  if (hasHan(prediction) || hasHan(gold)) {
    const predicted = characterTokens(prediction);
    const expected = characterTokens(gold);
    return {
      em: expected.length > 0 && predicted.join('\u0000') === expected.join('\u0000'),
      f1: overlapF1(predicted, expected),
    };
  }
  const predicted = normalizeAnswer(prediction);
  const expected = normalizeAnswer(gold);
  if ((SPECIAL.has(predicted) || SPECIAL.has(expected)) && predicted !== expected) return { em: false, f1: 0 };
  return {
    em: predicted === expected,
    f1: overlapF1(predicted.split(' ').filter(Boolean), expected.split(' ').filter(Boolean)),
  };
}

/** The best score over the gold answer and its aliases. */
export function bestAnswerScore(prediction: string, golds: readonly string[]): AnswerScore {
  let em = false;
  let f1 = 0;
  for (const gold of golds) {
    const score = scoreAnswer(prediction, gold);
    em ||= score.em;
    f1 = Math.max(f1, score.f1);
  }
  return { em, f1 };
}

/**
 * The short answer in a synthesized text: what precedes its first citation marker (Hopline's
 * synthesis states the answer first, cited), else its first line. An abstention has none.
 */
export function shortAnswer(text: string, abstained: boolean): string {
  if (abstained) return '';
  const cited = /^([\s\S]*?)\[\d+(?:\s*,\s*\d+)*\]/.exec(text);
  const first = cited ? cited[1] : (text.split('\n')[0] ?? '');
  return (first ?? '').replace(/[\s.。]+$/, '').trim();
}
