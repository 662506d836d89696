import type { Chunk__Output } from '@hopline/contracts';
import { containsStem, contentTerms, sameStem } from '@hopline/text';
import type { AnswerType } from './question.js';
import { expandRelations } from './relations.js';
import { sentences } from './text.js';

/**
 * The typed answers the offline reasoner can read off evidence: a date, a number, or a
 * comparison between the options of a choice. Each comes with the chunk it was read from.
 */

export interface ReadAnswer {
  answer: string;
  chunkId: string;
}

const MONTH = '(?:January|February|March|April|May|June|July|August|September|October|November|December)';
// A year ends at a word boundary, or where a capital follows it: text extracted from a life span
// may lose its dash ("(April 28, 1926February 19, 2016)").
const YEAR_END = '(?:\\b|(?=\\p{Lu}))';
const FULL_DATE = new RegExp(
  `\\b(?:\\d{1,2}\\s+${MONTH}\\s+\\d{3,4}|${MONTH}\\s+\\d{1,2},?\\s+\\d{3,4}|${MONTH}\\s+\\d{3,4})${YEAR_END}`,
  'gu',
);
// A four-digit number that a Han character other than 年 follows counts something ("1979例", "2024人").
const YEAR = new RegExp(`\\b(1[0-9]{3}|20[0-9]{2})s?${YEAR_END}(?!\\s*(?!年)[\\u3400-\\u9fff])`, 'gu');
// "2023年10月26日", "2023年10月", "10月26日", "10月中旬": how Chinese text states a date; a part
// of a month ("中旬", "底") dates it to the month as a day would. Every part is optional, so the
// lookahead for a character that can begin one keeps it from matching the empty string at every
// other position of a text: the same dates found, without a match object per character.
const CHINESE_DATE =
  /(?=[\d上中下初底末])(?:(\d{4})\s*年\s*)?(?:(\d{1,2})\s*月\s*)?(?:(\d{1,2})\s*[日号]|(上旬|中旬|下旬|初|底|末))?/g;
const CHINESE_DECADE = /(?:(上|\d{2})世纪(\d0)|(\d{3}0))\s*年代/;
const ISO_DATE = /\b(\d{4})-(\d{2})(?:-(\d{2}))?\b/g;
const MONTHS = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];
const NUMBER =
  /\b\d[\d,.]*(?:\s+(?:million|billion|thousand|hundred))?\b|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|hundred)\b/gi;

// A match's result: the sides' goals or points, joined by a dash, a colon or 比 ("3–1", "4比2");
// not a span of years ("2009–2016").
const SCORE = /(?<![\d.,])\d{1,3}\s?(?:[–—:-]|比)\s?\d{1,3}(?![\d.,])/u;

/** Whether a text gives a score as a sentence writes one ("3–1", "4比2"). */
export const namesScore = (text: string): boolean => SCORE.test(text);

/** Sentences of the chunks, those sharing most relation words with the question first. */
function rankedSentences(chunks: readonly Chunk__Output[], relationTerms: readonly string[]) {
  const relation = expandRelations(relationTerms);
  const ranked: { text: string; chunkId: string; overlap: number; order: number }[] = [];
  chunks.forEach((chunk, chunkRank) => {
    sentences(chunk.text).forEach((sentence, index) => {
      const terms = contentTerms(sentence.text);
      const overlap = relation.filter((term) => containsStem(terms, term)).length;
      ranked.push({ text: sentence.text, chunkId: chunk.chunkId, overlap, order: chunkRank * 100 + index });
    });
  });
  return ranked.sort((a, b) => b.overlap - a.overlap || a.order - b.order);
}

/**
 * The first match of one of the shared global patterns, which is left at its start: `matchAll`
 * begins where the pattern's `lastIndex` stands, so a match left behind here would make a later
 * `datesIn` or `countIn` skip the start of its text (a year answer read as no date at all).
 */
function execFromStart(pattern: RegExp, text: string): RegExpExecArray | null {
  pattern.lastIndex = 0;
  const match = pattern.exec(text);
  pattern.lastIndex = 0;
  return match;
}

const firstMatch = (pattern: RegExp, text: string): string | undefined => execFromStart(pattern, text)?.[0];

// "(9 May 1921 – 14 October 1988)": a life's span, its second date the death; glued when the
// dash was lost.
const DATE_SPAN = new RegExp(`(${FULL_DATE.source})(?:\\s*[-–—]\\s*)?(${FULL_DATE.source})`, 'u');
const DEATH_TERMS = ['death', 'died', 'dead'];

// "in 1981", "since 2003": a year after a preposition of time dates something, it counts nothing.
const YEAR_AFTER_TIME_WORD = /\b(?:in|since|until|till|before|after|during|by|from|of)\s+(?:1[0-9]{3}|20[0-9]{2})$/i;
// "one of the composers": one picked from many, not a count.
const ONE_OF = /^one\s+of\b/i;
// The words after a number that may name what it counts ("5 studio albums", "300 km long").
const COUNTED_WORDS = 2;

/**
 * Whether the words right after a number say it counts something the question does not ask
 * about ("more than thirty sonatas" is no answer to how many times a bridge was rebuilt), or that it
 * is part of a name. A number followed by punctuation or a function word ("$120 million at the
 * box office") says nothing.
 */
function countsOther(after: string, asked: readonly string[]): boolean {
  const words = [...after.matchAll(/[\p{L}\p{N}'’-]+|[^\s\p{L}\p{N}]/gu)]
    .slice(0, COUNTED_WORDS)
    .map((match) => match[0]);
  const first = words[0];
  // "the Seven Lanterns", "41 Harrow Lane": a number a name goes on from is part of the name.
  if (first !== undefined && /^\p{Lu}/u.test(first)) return true;
  if (first === undefined || !/^\p{Ll}/u.test(first) || contentTerms(first).length === 0) return false;
  return !words.some((word) => contentTerms(word).some((term) => containsStem(asked, term)));
}

/**
 * The first number a sentence states that counts something: not part of a date (the day and year
 * of "17 June 1702" count nothing, and a count read from them answers "how many" with a
 * birthday), nor a year a preposition of time introduces, nor "one of" a group.
 */
function countIn(text: string, asked: readonly string[]): string | undefined {
  const dates = [...text.matchAll(FULL_DATE), ...text.matchAll(ISO_DATE)].map((match) => ({
    start: match.index,
    end: match.index + match[0].length,
  }));
  for (const match of text.matchAll(NUMBER)) {
    const end = match.index + match[0].length;
    if (ONE_OF.test(text.slice(match.index)) || countsOther(text.slice(end), asked)) continue;
    if (YEAR_AFTER_TIME_WORD.test(`${text.slice(0, match.index)}${match[0]}`)) continue;
    if (!dates.some((date) => match.index < date.end && end > date.start)) return match[0];
  }
  return undefined;
}

/**
 * A date or number answer from the sentence that best matches the question's relation words.
 * A question about a death reads the end of a span of dates where any sentence gives one: a
 * biography states both dates together, birth first, and rarely says "died" beside them.
 */
export function readTypedAnswer(
  type: AnswerType,
  cited: readonly Chunk__Output[],
  relationTerms: readonly string[],
): ReadAnswer | undefined {
  if (type !== 'date' && type !== 'number' && type !== 'score') return undefined;
  const ranked = rankedSentences(cited, relationTerms);
  const asked = expandRelations(relationTerms);
  const wantsDeath = relationTerms.some((term) => DEATH_TERMS.some((death) => sameStem(death, term)));
  if (type === 'date' && wantsDeath) {
    for (const sentence of ranked) {
      const death = DATE_SPAN.exec(sentence.text)?.[2];
      if (death) return { answer: death, chunkId: sentence.chunkId };
    }
  }
  for (const sentence of ranked) {
    const found =
      type === 'date'
        ? (firstMatch(FULL_DATE, sentence.text) ??
          chineseDates(sentence.text)[0] ??
          chineseDecade(sentence.text)?.text ??
          firstMatch(YEAR, sentence.text))
        : type === 'score'
          ? SCORE.exec(sentence.text)?.[0]
          : countIn(sentence.text, asked);
    if (found) return { answer: found.trim(), chunkId: sentence.chunkId };
  }
  return undefined;
}

/** The year a chunk gives for an entity: its first, or for a death its last in the first sentence. */
export function yearOf(chunk: Chunk__Output, wantsDeath: boolean): number | undefined {
  const opening = sentences(chunk.text)[0]?.text ?? chunk.text;
  const years = [...opening.matchAll(YEAR)].map((match) => Number(match[1]));
  const pick = wantsDeath ? years.at(-1) : years[0];
  return pick === undefined || Number.isNaN(pick) ? undefined : pick;
}

/** The year a date answer names ("14 April 1917" → 1917), if any. */
function yearIn(answer: string): number | undefined {
  const match = execFromStart(YEAR, answer);
  return match ? Number(match[1]) : undefined;
}

/** A date as precise as the text states it: a year, a month of a year, or a day. */
export interface StatedDate {
  year: number;
  month?: number;
  day?: number;
}

/** The Chinese dates a text states, as written, in order: a year alone needs its 年 and a month or day. */
function chineseDates(text: string): string[] {
  CHINESE_DATE.lastIndex = 0;
  const dates: string[] = [];
  for (const match of text.matchAll(CHINESE_DATE)) {
    const [whole, year, month, day, part] = match;
    if (!whole || (!month && !day) || (!year && !(month && (day || part)))) continue;
    dates.push(whole.trim());
  }
  return dates;
}

/**
 * The first decade a Chinese text names with its century ("20世纪90年代", "上世纪90年代",
 * "1990年代"), as its first year: the only date a summary of a long trend may give. A bare
 * "90年代" names no century and is not read; "上世纪" is the 20th, as these texts are written
 * in the 21st.
 */
function chineseDecade(text: string): { text: string; year: number } | undefined {
  const match = CHINESE_DECADE.exec(text);
  if (!match) return undefined;
  const [whole, century, decade, fourDigits] = match;
  if (fourDigits) return { text: whole, year: Number(fourDigits) };
  const hundreds = century === '上' ? 19 : Number(century) - 1;
  return { text: whole, year: hundreds * 100 + Number(decade) };
}

/**
 * The date a phrase states, in any of the forms above; a date without a year ("3月19日") takes
 * `yearOfContext`, the year of the text it was read from. Undefined without a year.
 */
export function parseDate(text: string, yearOfContext?: number): StatedDate | undefined {
  const chinese = chineseDates(text)[0];
  if (chinese) {
    const [, year, month, day] =
      /(?:(\d{4})\s*年)?\s*(?:(\d{1,2})\s*月)?\s*(?:(\d{1,2})\s*[日号])?/.exec(chinese) ?? [];
    const resolved = year ? Number(year) : yearOfContext;
    if (resolved === undefined) return undefined;
    return {
      year: resolved,
      ...(month ? { month: Number(month) } : {}),
      ...(month && day ? { day: Number(day) } : {}),
    };
  }
  const decade = chineseDecade(text);
  if (decade) return { year: decade.year };
  const iso = execFromStart(ISO_DATE, text);
  if (iso) return { year: Number(iso[1]), month: Number(iso[2]), ...(iso[3] ? { day: Number(iso[3]) } : {}) };
  const full = firstMatch(FULL_DATE, text);
  const year = yearIn(full ?? text);
  if (year === undefined) return undefined;
  if (!full) return { year };
  const lower = full.toLowerCase();
  const month = MONTHS.findIndex((name) => lower.includes(name)) + 1;
  const day = /(?:^|\s)(\d{1,2})(?:\s|,)/.exec(full)?.[1];
  return { year, ...(month > 0 ? { month } : {}), ...(month > 0 && day ? { day: Number(day) } : {}) };
}

/**
 * The year a text's own dates place it in: the year of its first date stated with a month
 * ("2023年6月", "14 April 1917"), the context a later "6月24日" of it is read in. A year
 * mentioned alone ("自2008年以来…") is history the text cites, not its time: undefined.
 */
export function datedYearIn(text: string): number | undefined {
  const english = firstMatch(FULL_DATE, text);
  const candidates = [...chineseDates(text), ...(english ? [english] : [])];
  for (const candidate of candidates) {
    const date = parseDate(candidate);
    if (date?.month !== undefined) return date.year;
  }
  return undefined;
}

/** The first date a text states (its year filled from an earlier date in it), if any. */
export function firstDateIn(text: string): { text: string; date: StatedDate } | undefined {
  let year: number | undefined;
  const english = firstMatch(FULL_DATE, text);
  for (const candidate of [...chineseDates(text), ...(english ? [english] : [])]) {
    const date = parseDate(candidate, year);
    if (date) return { text: candidate, date };
    year ??= parseDate(candidate)?.year;
  }
  const plain = yearIn(text);
  return plain === undefined ? undefined : { text: String(plain), date: { year: plain } };
}

/** Earlier (< 0), later (> 0) or the same (0), as far as both dates are precise; by year at least. */
export function compareDates(a: StatedDate, b: StatedDate): number {
  if (a.year !== b.year) return a.year - b.year;
  if (a.month === undefined || b.month === undefined) return 0;
  if (a.month !== b.month) return a.month - b.month;
  if (a.day === undefined || b.day === undefined) return 0;
  return a.day - b.day;
}

/** Whether two dates fall in the same day, month or year; undefined when either is less precise than that. */
export function inSamePeriod(a: StatedDate, b: StatedDate, period: 'day' | 'month' | 'year'): boolean | undefined {
  if (a.year !== b.year) return false;
  if (period === 'year') return true;
  if (a.month === undefined || b.month === undefined) return undefined;
  if (a.month !== b.month) return false;
  if (period === 'month') return true;
  if (a.day === undefined || b.day === undefined) return undefined;
  return a.day === b.day;
}

/** A date as a text states it, its year unknown when neither it nor anything before it names one. */
export type TextDate = Omit<StatedDate, 'year'> & { year?: number };

/**
 * Every date a text states, in order: Chinese dates (a year alone too, with its 年: "2031年市政府…"),
 * then English full dates, then years no date already holds. A Chinese date without a year takes
 * the year stated before it; with none before ("6月24日报道称…"), its year is unknown.
 */
export function datesIn(text: string): TextDate[] {
  const dates: TextDate[] = [];
  const held: Array<[number, number]> = [];
  let year: number | undefined;
  for (const match of text.matchAll(CHINESE_DATE)) {
    const [whole, stated, month, day, part] = match;
    if (!whole?.trim()) continue;
    held.push([match.index, match.index + whole.length]);
    if (stated) year = Number(stated);
    if (!stated && !(month && (day || part))) continue;
    dates.push({
      ...(year === undefined ? {} : { year }),
      ...(month ? { month: Number(month) } : {}),
      ...(month && day ? { day: Number(day) } : {}),
    });
  }
  for (const match of text.matchAll(FULL_DATE)) {
    held.push([match.index, match.index + match[0].length]);
    const date = parseDate(match[0]);
    if (date) dates.push(date);
  }
  for (const match of text.matchAll(YEAR))
    if (!held.some(([start, end]) => match.index >= start && match.index < end)) dates.push({ year: Number(match[1]) });
  return dates;
}
