/**
 * Answer scores as HotpotQA's evaluation script computes them: answers are lower-cased, stripped
 * of punctuation and of the articles a/an/the, and compared as whole strings (EM) or as bags of
 * tokens (F1); "yes", "no" and "noanswer" only ever match themselves.
 */

const PUNCTUATION = /[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~‘’“”–—]/g;
const ARTICLES = /\b(a|an|the)\b/g;
const SPECIAL = new Set(['yes', 'no', 'noanswer']);

export function normalizeAnswer(text: string): string {
  return text.toLowerCase().replace(PUNCTUATION, '').replace(ARTICLES, ' ').split(/\s+/).filter(Boolean).join(' ');
}

export function exactMatch(prediction: string, gold: string): boolean {
  return normalizeAnswer(prediction) === normalizeAnswer(gold);
}

export function f1Score(prediction: string, gold: string): number {
  const predicted = normalizeAnswer(prediction);
  const expected = normalizeAnswer(gold);
  if ((SPECIAL.has(predicted) || SPECIAL.has(expected)) && predicted !== expected) return 0;
  const predictedTokens = predicted.split(' ').filter(Boolean);
  const expectedTokens = expected.split(' ').filter(Boolean);
  const counts = new Map<string, number>();
  for (const token of expectedTokens) counts.set(token, (counts.get(token) ?? 0) + 1);
  let common = 0;
  for (const token of predictedTokens) {
    const left = counts.get(token) ?? 0;
    if (left > 0) {
      common += 1;
      counts.set(token, left - 1);
    }
  }
  if (common === 0) return 0;
  const precision = common / predictedTokens.length;
  const recall = common / expectedTokens.length;
  return (2 * precision * recall) / (precision + recall);
}

/** The best score over the gold answer and its aliases. */
export function bestAnswerScore(prediction: string, golds: readonly string[]): { em: boolean; f1: number } {
  let em = false;
  let f1 = 0;
  for (const gold of golds) {
    em ||= exactMatch(prediction, gold);
    f1 = Math.max(f1, f1Score(prediction, gold));
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
  return (first ?? '').replace(/[\s.]+$/, '').trim();
}
