import { segmentChinese } from './chinese.js';
import { ENGLISH_STOP_WORDS, lightStem, singular } from './english.js';
import { memoizedTokenizer } from './memo.js';
import { foldText } from './normalize.js';

/**
 * Turns a text into index terms; the same function serves documents and queries. The terms are
 * read, never changed: a memo hands the same array to every caller.
 */
export interface Tokenizer {
  tokenize(text: string): readonly string[];
  /**
   * Names the terms `tokenize` produces: an index stored with terms of another version holds
   * terms a query of this one no longer asks for (or misses ones it does), so it is rebuilt.
   */
  readonly version: string;
}

export interface TokenizerOptions {
  /** Drop English and Chinese function words (default true). */
  stopWords?: boolean;
  /** Apply the light English stemmer (default true). */
  stem?: boolean;
}

const HAN = /[\u3400-\u9fff\uf900-\ufaff]/;
const HAN_RUN = /[\u3400-\u9fff\uf900-\ufaff]+/g;
// A word, possibly joined by connectors into an identifier: top_p, gpt-4, v1.2, o'neill, c++.
const WORD = /[\p{L}\p{N}]+(?:['._\-/][\p{L}\p{N}]+)*(?:\+\+|#)?/gu;
const LETTER = /\p{L}/u;
const DIGIT = /\p{N}/u;
const LETTER_OR_DIGIT_RUN = /\p{L}+|\p{N}+/gu;
// Numbered articles, chapters and clauses ("第十二条", "第 12 条") stay one term even when
// digits split them across Han and non-Han runs.
const NUMBERED_ARTICLE = /第\s*[0-9零〇一二两三四五六七八九十百千万]+\s*[条章节款项编部篇卷回集期届次]/g;
// A date in digits ("2023年10月16日", "10月16号", "2022年6月"): jieba leaves only its numbers and
// the single characters 年, 月 and 日, each frequent enough to weigh nothing, so an event that its
// date alone identifies could not be found by it. The day ("10月16日") and the month of a year
// ("2023年10月") become one term each, so either spelling of the date meets the other.
const DATE = /(?:(\d{4})\s*年\s*)?(\d{1,2})\s*月(?:\s*(\d{1,2})\s*[日号])?/g;
// What the index terms are; raised whenever a change of this file changes them.
const INDEX_TERMS_VERSION = 2;

const HAS_LETTER = 1;
const HAS_DIGIT = 2;
const HAS_CONNECTOR = 4;
// "+" and "#" end names like c++ and c#: such a word is kept whole, never stemmed.
const HAS_SYMBOL = 8;

/** Which kinds of characters a word holds: one pass over char codes, regexes only past ASCII. */
function kindOf(word: string): number {
  let kind = 0;
  for (let i = 0; i < word.length; i++) {
    const code = word.charCodeAt(i);
    if (code >= 97 && code <= 122) kind |= HAS_LETTER;
    else if (code >= 48 && code <= 57) kind |= HAS_DIGIT;
    else if (code === 39 || code === 46 || code === 95 || code === 45 || code === 47) kind |= HAS_CONNECTOR;
    else if (code >= 128) {
      const char = word[i] as string;
      if (LETTER.test(char)) kind |= HAS_LETTER;
      else if (DIGIT.test(char)) kind |= HAS_DIGIT;
    } else kind |= HAS_SYMBOL;
  }
  return kind;
}

const isAlpha = (word: string): boolean => kindOf(word) === HAS_LETTER;
const isDigits = (word: string): boolean => kindOf(word) === HAS_DIGIT;

/** A space or a hyphen between "RFC" and "7231" still yields "rfc7231": every spelling meets. */
function joinableGap(text: string, from: number, to: number): boolean {
  if (to !== from + 1) return false;
  const code = text.charCodeAt(from);
  return code === 32 || code === 45;
}

/**
 * What a word is, for retrieval and reasoning alike: a run of letters and digits, possibly joined
 * by connectors into an identifier (top_p, gpt-4, v1.2, o'neill, c++), with a possessive "'s"
 * folded onto its name; a run of Han characters is segmented by jieba. Index terms add each
 * word's search variants (an identifier whole and in parts, letters and digits apart, "RFC 7231"
 * joined, numbered articles whole) so that every spelling meets; content terms are the words
 * themselves, in order, one term each (an identifier by its parts).
 */
// The stemmers a tokenizer may use, by the name its version gives them.
const STEMMERS = { 'light-stem': lightStem, plurals: singular, unstemmed: undefined } as const;

class MixedLanguageTokenizer implements Tokenizer {
  private readonly stem: ((word: string) => string) | undefined;

  constructor(
    private readonly stopWords: boolean,
    stemming: keyof typeof STEMMERS,
    private readonly variants: boolean,
  ) {
    this.stem = STEMMERS[stemming];
    this.version = [
      `mixed-${INDEX_TERMS_VERSION}`,
      stopWords ? 'stop-words-dropped' : 'stop-words-kept',
      stemming,
      variants ? 'index' : 'content',
    ].join(' ');
  }

  readonly version: string;

  private stemmed(word: string): string {
    return this.stem ? this.stem(word) : word;
  }

  tokenize(text: string): readonly string[] {
    const folded = foldText(text).toLowerCase();
    const out: string[] = [];
    if (!HAN.test(folded)) {
      this.latin(folded, out);
      return out;
    }
    let last = 0;
    for (const match of folded.matchAll(HAN_RUN)) {
      this.latin(folded.slice(last, match.index), out);
      segmentChinese(match[0], out, this.stopWords);
      last = match.index + match[0].length;
    }
    this.latin(folded.slice(last), out);
    if (this.variants) wholeHanTerms(folded, out);
    return out;
  }

  private latin(text: string, out: string[]): void {
    let previousWord: string | undefined;
    let previousEnd = -1;
    for (const match of text.matchAll(WORD)) {
      let word = match[0];
      if (word.endsWith("'s")) word = word.slice(0, -2);
      const kind = kindOf(word);
      if (
        this.variants &&
        previousWord !== undefined &&
        kind === HAS_DIGIT &&
        joinableGap(text, previousEnd, match.index)
      ) {
        out.push(previousWord + word);
      }
      previousWord = undefined;
      if (kind & HAS_CONNECTOR) {
        this.compound(word, out);
      } else {
        this.simple(word, kind, out);
        if (this.variants && kind === HAS_LETTER && !this.isStopWord(word)) previousWord = word;
      }
      previousEnd = match.index + match[0].length;
    }
  }

  /** An identifier: indexed whole, in parts, and with letters+digits parts joined; as content, its parts. */
  private compound(word: string, out: string[]): void {
    if (this.variants) out.push(word);
    const parts = word.split(/['._\-/]+/).filter((part) => part.length > 0);
    for (const part of parts) {
      const kind = kindOf(part);
      // A letter alone is noise in an index, but a word of a name to reasoning ("L.A.", "G-Force").
      if (part.length > 1 || kind === HAS_DIGIT || !this.variants) this.simple(part, kind, out);
    }
    if (this.variants && parts.length === 2 && isAlpha(parts[0] ?? '') && isDigits(parts[1] ?? ''))
      out.push(parts.join(''));
  }

  private simple(word: string, kind: number, out: string[]): void {
    if (kind === HAS_LETTER) {
      if (this.isStopWord(word)) return;
      out.push(this.stemmed(word));
      return;
    }
    out.push(word);
    if (kind === HAS_DIGIT || !this.variants) return;
    // Letters and digits mixed ("rfc7231", "1990s"): the whole term, plus each run.
    for (const run of word.matchAll(LETTER_OR_DIGIT_RUN)) {
      const part = run[0];
      if (isDigits(part)) out.push(part);
      else if (part.length > 1 && !this.isStopWord(part)) out.push(this.stemmed(part));
    }
  }

  private isStopWord(word: string): boolean {
    return this.stopWords && ENGLISH_STOP_WORDS.has(word);
  }
}

/** The numbered articles and dates of a folded text with Han, each as the whole terms the index adds. */
function wholeHanTerms(folded: string, out: string[]): void {
  for (const match of folded.matchAll(NUMBERED_ARTICLE)) {
    const article = match[0].replace(/\s+/g, '');
    // jieba usually emits an all-Han article whole already; a second copy would double its tf.
    if (!out.includes(article)) out.push(article);
  }
  for (const match of folded.matchAll(DATE)) dateTerms(match, out);
}

/**
 * The whole terms the index adds for a Chinese text's numbered articles and dates ("第十二条",
 * "10月16日", "2023年10月"), for a search engine whose own analyzer splits them (Elasticsearch's
 * smartcn and standard both do): it indexes and queries them in a field of their own.
 */
export function wholeDateAndArticleTerms(text: string): string[] {
  const folded = foldText(text).toLowerCase();
  const out: string[] = [];
  if (HAN.test(folded)) wholeHanTerms(folded, out);
  return out;
}

/** A date's index terms: its day of the month and its month of the year, where it names them. */
function dateTerms([, year, month, day]: RegExpMatchArray, out: string[]): void {
  const monthNumber = Number(month);
  if (monthNumber < 1 || monthNumber > 12) return;
  const dayNumber = Number(day);
  if (day !== undefined && dayNumber >= 1 && dayNumber <= 31) out.push(`${monthNumber}月${dayNumber}日`);
  if (year !== undefined) out.push(`${year}年${monthNumber}月`);
}

export function createTokenizer(options: TokenizerOptions = {}): Tokenizer {
  return new MixedLanguageTokenizer(
    options.stopWords ?? true,
    (options.stem ?? true) ? 'light-stem' : 'unstemmed',
    true,
  );
}

// Reasoning asks for the terms of the same entity names and sentences many times per question.
const contentTokenizer = memoizedTokenizer(new MixedLanguageTokenizer(true, 'plurals', false));

/**
 * The content words of a text in order, as reasoning compares them: folded, stop words left
 * out, plurals made singular (not stemmed further: the terms are read back as words, in queries
 * and sub-questions), Chinese segmented in search mode.
 */
export function contentTerms(text: string): readonly string[] {
  return contentTokenizer.tokenize(text);
}
