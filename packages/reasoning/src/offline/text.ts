import { contentTerms, fold, memoizeByText, writtenInChinese } from '@hopline/text';
import type { ReasoningSwitch } from '../switches.js';
import { isOn } from '../switches.js';

/**
 * How the offline reasoner reads evidence beyond its terms and names (words, stop words,
 * stemming and the named spans that are a hop's candidate bridge entities come from
 * @hopline/text, as retrieval's do): phrases a text states, title conventions and sentence
 * bounds, in English and Chinese.
 */

/** Words that ask rather than tell: never part of what a hop must match. */
export const QUESTION_WORDS: ReadonlySet<string> = new Set([
  'what',
  'which',
  'who',
  'whom',
  'whose',
  'when',
  'where',
  'why',
  'how',
  'many',
  'much',
  'name',
  'named',
  'type',
  'kind',
  'year',
  'is',
  'was',
  'did',
  'does',
]);

const CJK = /[\u3400-\u9fff\uf900-\ufaff]/;
const WORDS = /[\p{L}\p{N}]+/gu;
// Words with the combining marks a decomposed text writes after their letters ("e" + "\u0301").
const MARKED_WORDS = /[\p{L}\p{N}][\p{L}\p{M}\p{N}]*/gu;

/**
 * Words of a text for phrase matching: folded, punctuation gone, each Han character a word of its
 * own. A phrase is matched by its characters in order, so every letter-digit run counts
 * ("G-Force" states "G Force"), where terms would read an identifier by its parts. Remembered
 * per text: every hop asks whether the same chunks state its phrases.
 */
const phraseWords = memoizeByText((text: string): string => {
  const words: string[] = [];
  for (const match of fold(text).matchAll(WORDS)) {
    const word = match[0];
    if (CJK.test(word))
      words.push(...(word.match(/[\u3400-\u9fff\uf900-\ufaff]|[^\u3400-\u9fff\uf900-\ufaff]+/g) ?? []));
    else words.push(word);
  }
  return ` ${words.join(' ')} `;
});

/**
 * Whether a text states a phrase: its words, in order, as whole words (case, diacritics and
 * punctuation aside). "the Lakeside Otters, who" states "Lakeside Otters"; "Otters" does not
 * state "Otter"; "隶属于数据平台部" states "数据平台部".
 */
export function states(text: string, phrase: string): boolean {
  const wanted = phraseWords(phrase);
  return wanted.trim() !== '' && phraseWords(text).includes(wanted);
}

/**
 * A phrase as a text writes it, where the two differ only in case, diacritics or punctuation
 * ("Renée Oskarsdóttir" for "Renee Oskarsdottir"): the text's own letters; undefined where it does not state it.
 */
export function writtenAs(text: string, phrase: string): string | undefined {
  const wanted = [...phrase.matchAll(MARKED_WORDS)].map((match) => fold(match[0]));
  const written = [...text.matchAll(MARKED_WORDS)];
  if (wanted.length === 0) return undefined;
  for (let start = 0; start + wanted.length <= written.length; start += 1) {
    const run = written.slice(start, start + wanted.length);
    if (!run.every((match, offset) => fold(match[0]) === wanted[offset])) continue;
    const [first, last] = [run[0] as RegExpExecArray, run.at(-1) as RegExpExecArray];
    return text.slice(first.index, last.index + last[0].length);
  }
  return undefined;
}

/** A text matched literally inside a regular expression. */
export const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const chineseChunks = new WeakMap<object, boolean>();

/** Whether a chunk is written in Chinese (else in English), kept per chunk object. */
export function chunkInChinese(chunk: { readonly text: string }): boolean {
  let chinese = chineseChunks.get(chunk);
  if (chinese === undefined) {
    chinese = writtenInChinese(chunk.text);
    chineseChunks.set(chunk, chinese);
  }
  return chinese;
}

const termsOfChunk = new WeakMap<object, readonly string[]>();

/**
 * A chunk's content terms, title first. Kept per chunk object: a hop asks for them once per
 * entity and claim, and the text (a new string each time it is joined to its title) would be
 * hashed whole for every lookup of the memo.
 */
export function chunkTerms(chunk: { readonly title: string; readonly text: string }): readonly string[] {
  let terms = termsOfChunk.get(chunk);
  if (terms === undefined) {
    terms = contentTerms(`${chunk.title} ${chunk.text}`);
    termsOfChunk.set(chunk, terms);
  }
  return terms;
}

/**
 * Which of Wikipedia's ways to disambiguate a title the reasoning reads (switches
 * `parentheticalTitles`, `commaTitles`), and whether a title may name its entity in another form
 * of the name (`nameForms`).
 */
export interface TitleConventions {
  parenthesis: boolean;
  comma: boolean;
  nameForms: boolean;
}

/** The title conventions left on when the named switches are off. */
export const titleConventions = (switchedOff: readonly ReasoningSwitch[] | undefined): TitleConventions => ({
  parenthesis: isOn(switchedOff, 'parentheticalTitles'),
  comma: isOn(switchedOff, 'commaTitles'),
  nameForms: isOn(switchedOff, 'nameForms'),
});

/** A title without its disambiguating parenthesis: "No Harbour (1936 film)" → "No Harbour". */
export function bareTitle(title: string, conventions: TitleConventions): string {
  if (!conventions.parenthesis) return title.trim();
  return title.replace(/\s*\([^)]*\)\s*$/, '').trim();
}

/** Sentences with their offsets; a sentence ends at . ! ? 。！？ followed by space or the end. */
export function sentences(text: string): { text: string; start: number; end: number }[] {
  const result: { text: string; start: number; end: number }[] = [];
  const boundary = /(?<![A-Z]\.[A-Z]|\b(?:St|Mt|Dr|Mr|Mrs|Ms|Jr|Sr|No|Co|Inc|Ltd|[A-Z]))[.!?](?=\s+|$)|[。！？]/g;
  let start = 0;
  for (const match of text.matchAll(boundary)) {
    const end = match.index + match[0].length;
    const piece = text.slice(start, end);
    if (piece.trim())
      result.push({ text: piece.trim(), start: start + (piece.length - piece.trimStart().length), end });
    start = end;
  }
  const rest = text.slice(start);
  if (rest.trim())
    result.push({ text: rest.trim(), start: start + (rest.length - rest.trimStart().length), end: text.length });
  return result;
}
