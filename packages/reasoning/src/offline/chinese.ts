import type { TaggedWord } from '@hopline/text';
import { CHINESE_STOP_WORDS, chineseNames, hasHan, nounPhraseBefore, taggedWords } from '@hopline/text';

/**
 * Chinese questions as the offline reasoner reads them. Chinese has no capitals and no spaces,
 * so words come from jieba's segmenter and names from @hopline/text's name reader (its tags, and
 * the phrases that state a relation).
 */

/** The content words of a text as written (precise mode, one reading per word), function words out. */
export function chineseWords(text: string): TaggedWord[] {
  return taggedWords(text).filter(({ word }) => /[\p{L}\p{N}]/u.test(word) && !CHINESE_STOP_WORDS.has(word));
}

/**
 * The entities a Chinese question names: tagged names, and the noun phrase a "的" hangs a role
 * or attribute on ("天穹项目的负责人" → 天穹项目), which a dictionary rarely knows as a name.
 */
export function chineseQuestionEntities(question: string): string[] {
  const words = taggedWords(question);
  const entities: string[] = [];
  const push = (range: [number, number] | undefined) => {
    if (!range) return;
    const name = question.slice((words[range[0]] as TaggedWord).start, (words[range[1] - 1] as TaggedWord).end).trim();
    if ([...name].length >= 2 && hasHan(name) && !entities.includes(name)) entities.push(name);
  };
  const possessive = words.findIndex((word) => word.word === '的');
  if (possessive > 0) push(nounPhraseBefore(words, possessive));
  for (const name of chineseNames(question))
    if (!entities.some((entity) => entity.includes(name.text))) entities.push(name.text);
  return entities;
}

// A month, and maybe a day, with no year written before it ("6月15日", "6月"): as news states
// the date of an event of its own year. A month of another year than the text's ("去年2月",
// "明年3月") is not one.
const YEARLESS_DATE = /(?<!\d\s*年\s*)(?<![去前明后上]年\s*)(?<!\d)(\d{1,2})\s*月(?:\s*(\d{1,2})\s*[日号])?/;

/** A date a Chinese text states without its year, as written, with its month and day. */
export interface YearlessDate {
  text: string;
  month: number;
  day?: number;
}

/** The first month (and day) a Chinese text states with no year before it, if any. */
export function yearlessDateIn(text: string): YearlessDate | undefined {
  const match = YEARLESS_DATE.exec(text);
  if (!match) return undefined;
  const month = Number(match[1]);
  const day = match[2] === undefined ? undefined : Number(match[2]);
  if (month < 1 || month > 12 || (day !== undefined && (day < 1 || day > 31))) return undefined;
  return { text: match[0].trim(), month, ...(day === undefined ? {} : { day }) };
}
