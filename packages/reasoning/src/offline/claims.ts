import type { Chunk__Output } from '@hopline/contracts';
import { chineseNames, containsStem, contentTerms, hasHan, namedSpans, taggedWords } from '@hopline/text';
import { chunkTerms, QUESTION_WORDS, states } from './text.js';

/**
 * What a written sentence claims that its cited evidence must state: the names it gives
 * (capitalised runs, quoted titles, Chinese names), its numbers (digits and number words, in
 * English and Chinese), and, when the sentence is only a short Chinese noun phrase with no name
 * in it ("数据平台部"), that phrase whole — each of these exactly; and its other content words
 * ("founded", "budget", "部门"), most of which the evidence must use too, so a paraphrase passes
 * and a sentence about something else does not. Function words and framing ("What was found:",
 * "the documents do not say") are not claims.
 */

const NUMBER = /\p{N}+(?:[.,]\p{N}+)*/gu;
// "one" is left out: it is a pronoun as often as a number ("the one who", "one of").
const UNITS =
  'two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty';
const TENS = ['thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'];
const ENGLISH_NUMBERS: ReadonlyMap<string, number> = new Map<string, number>([
  ...UNITS.split(' ').map((word, index): [string, number] => [word, index + 2]),
  ...TENS.map((word, index): [string, number] => [word, 30 + 10 * index]),
  ['hundred', 100],
  ['thousand', 1_000],
  ['million', 1_000_000],
  ['billion', 1_000_000_000],
  ['dozen', 12],
]);
const ENGLISH_NUMBER_WORD = new RegExp(`\\b(?:${[...ENGLISH_NUMBERS.keys()].join('|')})\\b`, 'giu');
// Chinese numerals count where they count something: "三个", "十二年", "五位".
const CHINESE_NUMBER = /[零一二两三四五六七八九十百千万亿]+(?=[个年位名次月日岁人家项部本条种倍])/gu;
const CHINESE_DIGITS = '零一二三四五六七八九';
// The share of a claim's content words that must be the evidence's own: the rest is paraphrase.
const TERM_SHARE = 2 / 3;
/** Words that frame an answer rather than state a fact about the world. */
const FRAMING_WORDS: ReadonlySet<string> = new Set([
  // "yes" judges, as "no" (a stop word) does: no document states it.
  ...'yes answer cannot say said state stated document evidence source found find know known knowledge base information question step chain incomplete complete mention mentioned according unknown unclear provided given retrieved search text shown show also however therefore'.split(
    ' ',
  ),
  ...'回答 无法 文档 证据 知识库 信息 问题 根据 找到 提到 未 没有 步骤 显示'.split(' '),
]);
// A bare answer phrase is short; a longer span of Chinese is a sentence, checked by its names.
const SHORT_PHRASE = 12;

const isFraming = (text: string) =>
  contentTerms(text).every((term) => QUESTION_WORDS.has(term) || FRAMING_WORDS.has(term));

// A bare yes-or-no answer, in English or Chinese: a judgement, which no document states as such.
const JUDGEMENT = /^\s*(?:yes|no|是|是的|对|否|不是|不对)\s*[.!。！]?\s*$/iu;
export const isJudgement = (text: string) => JUDGEMENT.test(text);

/** A Chinese segment that is one noun phrase (no verb), the way an answer is written. */
function chineseNounPhrase(text: string): string | undefined {
  const phrase = text.replace(/^[\s\p{P}]+|[\s\p{P}]+$/gu, '');
  if (!hasHan(phrase) || [...phrase].length > SHORT_PHRASE || isJudgement(phrase)) return undefined;
  return taggedWords(phrase).every((word) => !word.tag.startsWith('v')) ? phrase : undefined;
}

/** The value of a number word, so "three" is stated by "3" too; undefined for digits and the rest. */
function numberValue(word: string): number | undefined {
  const english = ENGLISH_NUMBERS.get(word.toLowerCase());
  if (english !== undefined) return english;
  if ([...word].length === 1 && CHINESE_DIGITS.includes(word)) return CHINESE_DIGITS.indexOf(word);
  if (word === '两') return 2;
  if (word === '十') return 10;
  return undefined;
}

/**
 * Whether a text names a number: in digits, as an English number word ("one" too: an answer to
 * "how many" is no pronoun), or as Chinese numerals counting something.
 */
export function namesNumber(text: string): boolean {
  // `search` leaves the shared global patterns' lastIndex as it was, which `test` would not.
  return [NUMBER, ENGLISH_NUMBER_WORD, /\bone\b/i, CHINESE_NUMBER].some((pattern) => text.search(pattern) >= 0);
}

/** Whether a text states a phrase; a number word is stated by its digits as well. */
export function statesPhrase(text: string, phrase: string): boolean {
  if (states(text, phrase)) return true;
  const value = numberValue(phrase);
  return value !== undefined && states(text, String(value));
}

/** A claim: phrases each chunk set must state exactly, and content words it must mostly use. */
export interface Claim {
  phrases: string[];
  terms: string[];
}

/** The claim a piece of written text makes; empty when it makes none (framing, "yes"). */
export function claimOf(text: string): Claim {
  if (isJudgement(text)) return { phrases: [], terms: [] };
  const phrases = claimPhrases(text);
  const inPhrases = new Set(phrases.flatMap((phrase) => contentTerms(phrase)));
  const terms = [
    ...new Set(
      contentTerms(text).filter(
        (term) =>
          !inPhrases.has(term) &&
          !QUESTION_WORDS.has(term) &&
          !FRAMING_WORDS.has(term) &&
          !/^\p{N}/u.test(term) &&
          numberValue(term) === undefined,
      ),
    ),
  ];
  return { phrases, terms };
}

export const isEmptyClaim = (claim: Claim) => claim.phrases.length === 0 && claim.terms.length === 0;

type Source = Pick<Chunk__Output, 'title' | 'text'>;

/** Whether these chunks together state the claim: every phrase in one of them, and most of its words. */
export function supports(chunks: readonly Source[], claim: Claim): boolean {
  if (
    !claim.phrases.every((phrase) =>
      chunks.some((chunk) => statesPhrase(chunk.text, phrase) || statesPhrase(chunk.title, phrase)),
    )
  )
    return false;
  if (claim.terms.length === 0) return true;
  const available = chunks.flatMap((chunk) => chunkTerms(chunk));
  const used = claim.terms.filter((term) => containsStem(available, term)).length;
  // Names and numbers already tie a claim to its source: then a word in three may be paraphrase
  // ("lies on" for "flows through"); a claim of words alone must use two in three of them.
  const share = claim.terms.length * TERM_SHARE;
  return used >= (claim.phrases.length > 0 ? Math.floor(share) : Math.ceil(share));
}

/** The phrases of `text` that the evidence it cites must state, each once. */
export function claimPhrases(text: string): string[] {
  const phrases = new Set<string>();
  for (const span of namedSpans(text)) if (!isFraming(span.text)) phrases.add(span.text);
  if (hasHan(text)) {
    const names = chineseNames(text);
    for (const name of names) phrases.add(name.text);
    // A bare answer phrase names nothing the tagger knows ("数据平台部"): then the phrase is the
    // claim. One that gives a number in digits ("早于天穹项目的 2030") is checked by its number and
    // its words: it joins what the writer wrote around them, which no source states whole.
    const whole = names.length === 0 && text.search(NUMBER) < 0 ? chineseNounPhrase(text) : undefined;
    if (whole) phrases.add(whole);
  }
  for (const match of text.matchAll(NUMBER)) phrases.add(match[0]);
  for (const match of text.matchAll(ENGLISH_NUMBER_WORD)) phrases.add(match[0].toLowerCase());
  for (const match of text.matchAll(CHINESE_NUMBER)) phrases.add(match[0]);
  // A name inside a longer claimed name ("Falcons" in "Granite Falcons") is claimed by it.
  return [...phrases].filter(
    (phrase) => ![...phrases].some((other) => other !== phrase && other.includes(phrase) && !/^\p{N}/u.test(phrase)),
  );
}

/**
 * Whether the chunks state a claim: every phrase it makes, each in the text or title of one of
 * them. Undefined when the claim makes no phrase a reader could check against a source.
 */
export function claimStatedBy(
  claim: string,
  chunks: ReadonlyArray<Pick<Chunk__Output, 'title' | 'text'>>,
): boolean | undefined {
  const phrases = claimPhrases(claim);
  if (phrases.length === 0) return undefined;
  return phrases.every((phrase) => chunks.some((chunk) => states(chunk.text, phrase) || states(chunk.title, phrase)));
}
