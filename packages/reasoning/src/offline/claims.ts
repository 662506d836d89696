import type { Chunk__Output } from '@hopline/contracts';
import { contentTerms, hasHan, taggedWords } from '@hopline/text';
import { chineseNames } from './chinese.js';
import { namedSpans, QUESTION_WORDS, states } from './text.js';

/**
 * What a written sentence claims that its cited evidence must state: the names it gives
 * (capitalised runs, quoted titles, Chinese names), its numbers, and, when the sentence is only
 * a short Chinese noun phrase with no name in it ("数据平台部"), that phrase whole. Function words, framing ("What
 * was found:") and paraphrase are not claims: a reader checks names and numbers against the
 * source, and so does the citation check.
 */

const NUMBER = /\p{N}+(?:[.,]\p{N}+)*/gu;
// A bare answer phrase is short; a longer span of Chinese is a sentence, checked by its names.
const SHORT_PHRASE = 12;

const isFraming = (text: string) => contentTerms(text).every((term) => QUESTION_WORDS.has(term));

/** A Chinese segment that is one noun phrase (no verb), the way an answer is written. */
function chineseNounPhrase(text: string): string | undefined {
  const phrase = text.replace(/^[\s\p{P}]+|[\s\p{P}]+$/gu, '');
  if (!hasHan(phrase) || [...phrase].length > SHORT_PHRASE) return undefined;
  return taggedWords(phrase).every((word) => !word.tag.startsWith('v')) ? phrase : undefined;
}

/** The phrases of `text` that the evidence it cites must state, each once. */
export function claimPhrases(text: string): string[] {
  const phrases = new Set<string>();
  for (const span of namedSpans(text)) if (!isFraming(span.text)) phrases.add(span.text);
  if (hasHan(text)) {
    const names = chineseNames(text);
    for (const name of names) phrases.add(name.text);
    // A bare answer phrase names nothing the tagger knows ("数据平台部"): then the phrase is the claim.
    const whole = names.length === 0 ? chineseNounPhrase(text) : undefined;
    if (whole) phrases.add(whole);
  }
  for (const match of text.matchAll(NUMBER)) phrases.add(match[0]);
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
