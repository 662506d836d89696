import type { Chunk__Output } from '@hopline/contracts';
import { Grade, type Grade__Output } from '@hopline/contracts';
import type { TaggedWord } from '@hopline/text';
import {
  CHINESE_STOP_WORDS,
  chineseNames,
  containsStem,
  contentTerms,
  hasHan,
  taggedWords,
  termSpecificity,
} from '@hopline/text';
import type { ReasoningSwitch } from '../switches.js';
import { isOn } from '../switches.js';
import type { TextDate } from './answers.js';
import { datesIn } from './answers.js';

const RELEVANT_SHARE = 0.5;
/**
 * The weighted share of an event's words a chunk must state to be about it. Tuned on the tune
 * half of the ChronoQA dev questions (`pnpm eval --split tune --unanswerable 50`): a chunk about
 * the event omits only its common words ("事件", "当天", "比赛"); a dated document about
 * something else that shares the topic misses the names and the rarer verbs. 0.6 before words
 * said with their characters apart earned part credit (MORPHEME_CREDIT); with it, 0.65 keeps
 * as many such documents out (0.7 abstains on more answerable questions than it catches
 * unanswerable ones).
 */
const ABOUT_EVENT_SHARE = 0.65;

/**
 * How well a hop's best evidence matches its query: the share of the query's content terms
 * the top chunk (title and text) contains: half or more is RELEVANT, some AMBIGUOUS, none (or no
 * evidence at all) IRRELEVANT.
 */
export function gradeEvidence(query: string, chunks: readonly Chunk__Output[]): Grade__Output {
  const top = chunks[0];
  const wanted = [...new Set(contentTerms(query))];
  if (!top || wanted.length === 0) return Grade.IRRELEVANT;
  const present = contentTerms(`${top.title} ${top.text}`);
  const share = wanted.filter((term) => containsStem(present, term)).length / wanted.length;
  if (share >= RELEVANT_SHARE) return Grade.RELEVANT;
  return share > 0 ? Grade.AMBIGUOUS : Grade.IRRELEVANT;
}

/**
 * A phrase's words, once each: jieba's precise-mode words for Chinese, content terms for the rest.
 * A phrase without Chinese is not given to jieba, which cuts a Latin word at each letter outside
 * ASCII ("Fırat" into "F", "ı", "rat") where the chunk's own terms keep it whole.
 */
function phraseWords(phrase: string): string[] {
  if (!hasHan(phrase)) return [...new Set(contentTerms(phrase))];
  const words = taggedWords(phrase).flatMap(({ word }) =>
    hasHan(word) ? (CHINESE_STOP_WORDS.has(word) ? [] : [word]) : contentTerms(word),
  );
  return [...new Set(words)];
}

/**
 * The credit a Chinese word earns, at most, from a text that holds its characters apart: a
 * paraphrase keeps a word's morphemes and changes their compound ("判刑" stated as "判处有期徒刑",
 * "入京" as "进京", "诉讼" as "被诉"). Less than the word whole, as a character alone is
 * ambiguous. Tuned on the tune half of the ChronoQA dev questions (`--unanswerable 50`): 0.3
 * and 0.5 both name the right first event in 38 of 51 which-first questions (34 with none);
 * 0.5 loses three abstentions on the copies without a gold document, 0.3 one.
 */
const MORPHEME_CREDIT = 0.3;

// Bigrams of a Chinese word: a long word a text writes with one character changed or a part
// left out ("封面人物" against "封面") is stated in part.
function bigrams(word: string): string[] {
  const chars = [...word];
  return chars.slice(1).map((char, index) => `${chars[index] as string}${char}`);
}

/**
 * How much of a word a text states, 0..1: a Chinese word wherever the text holds it (Chinese
 * marks no word boundaries, and the segmenter cuts a text and a phrase differently), in part
 * by its bigrams when it is three characters or longer, and at least by its characters at a
 * discount (MORPHEME_CREDIT); another word by its stem, whole.
 */
function statedPart(word: string, text: string, terms: readonly string[]): number {
  if (!hasHan(word)) return containsStem(terms, word) ? 1 : 0;
  if (text.includes(word)) return 1;
  const chars = [...word];
  const byMorphemes = (MORPHEME_CREDIT * chars.filter((char) => text.includes(char)).length) / chars.length;
  if (chars.length < 3) return byMorphemes;
  const parts = bigrams(word);
  return Math.max(byMorphemes, parts.filter((part) => text.includes(part)).length / parts.length);
}

/**
 * The share of a phrase's words a chunk (title and text) states, each word weighted by how much
 * it tells texts apart: a chunk that states the names and the rare words of an event and leaves
 * out "事件" covers most of it; one that shares only the common words covers little.
 */
export function weightedCoverage(phrase: string, chunk: Chunk__Output): number {
  const words = phraseWords(phrase);
  const text = `${chunk.title} ${chunk.text}`.toLowerCase();
  const terms = contentTerms(text);
  const total = words.reduce((sum, word) => sum + termSpecificity(word), 0);
  if (total === 0) return 0;
  return words.reduce((sum, word) => sum + termSpecificity(word) * statedPart(word, text, terms), 0) / total;
}

/** Whether a date a text states agrees with one an event names, as far as both are precise. */
const agrees = (named: TextDate, stated: TextDate): boolean =>
  (named.year === undefined || stated.year === undefined || named.year === stated.year) &&
  (named.month === undefined || stated.month === undefined || named.month === stated.month) &&
  (named.day === undefined || stated.day === undefined || named.day === stated.day);

/**
 * Whether a chunk's dates leave room for the dates an event names ("2031年青川市开通地铁",
 * "2031年3月26日澜沧市发布规划"): every one agrees with a date the chunk states as precisely as the
 * event names it, or, where the chunk states none that precisely, with one it states at all. A
 * chunk that states no date, or one whose year it leaves unknown, says nothing against a year;
 * one about the same kind of thing on another day does.
 */
function datesAgree(event: string, text: string): boolean {
  const stated = datesIn(text);
  if (stated.length === 0) return true;
  return datesIn(event).every((named) => {
    const asPrecise = stated.filter(
      (date) =>
        (named.month === undefined || date.month !== undefined) && (named.day === undefined || date.day !== undefined),
    );
    return (asPrecise.length > 0 ? asPrecise : stated).some((date) => agrees(named, date));
  });
}

// A date an event names ("2024年3月26日", "2031年", "6月"): jieba cuts it into digits, which no
// general table weighs (each weighs as much as a name), and 年, 月 and 日, so a full date is
// most of an event's weight.
const NAMED_DATE = /(?:\d{4}\s*年\s*)?\d{1,2}\s*月(?:\s*\d{1,2}\s*[日号])?|\d{4}\s*年/g;
/**
 * The weighted share of an event's words other than its dates that a chunk about it must state
 * besides them: a report of another event on the same day states the date and next to nothing
 * else (under 0.05 on the tune half of the ChronoQA dev questions), a paraphrase of the event
 * the date ties to it ("澜大" for "澜州大学", "采取行动" for what was done) a fifth or more.
 */
const BEYOND_DATE_SHARE = 0.1;

// Words that join an event's parties: "雄鹰对猛虎的比赛", "A与B签署协议", "A和B参加典礼".
const PARTY_JOINERS = new Set(['对', '与', '和', '同', '跟']);
const isNounish = (word: TaggedWord) => /^(?:n|j|eng)/.test(word.tag) || (word.tag === 'x' && /\p{L}/u.test(word.word));

/**
 * The parties an event names, each of which a chunk about it must name: the nouns a joining word
 * stands between ("雄鹰", "猛虎"), and, where the event is dated to its month or day, its names
 * (jieba's name tags and unknown words, "2021年3月5日澜州确诊病例": 澜州). A report of one party
 * alone, or of another place's event that day, shares the date and the common words ("比赛",
 * "确诊病例"); what tells the event apart is who or where.
 */
function eventParties(event: string, undated: string): string[] {
  const words = taggedWords(undated);
  // The noun next to the joining word, or past a one-character head ("澜沧/队") the name before it.
  const partyAt = (index: number, outward: number): string | undefined => {
    const word = words[index];
    if (!word || !isNounish(word)) return undefined;
    const further = words[index + outward];
    return [...word.word].length < 2 && further && isNounish(further) ? further.word : word.word;
  };
  const joined = words.flatMap((word, index) => {
    const before = partyAt(index - 1, -1);
    const after = partyAt(index + 1, 1);
    return PARTY_JOINERS.has(word.word) && before && after ? [before, after] : [];
  });
  const toTheDay = datesIn(event).some((date) => date.month !== undefined);
  return toTheDay ? [...joined, ...chineseNames(undated).map((name) => name.text)] : joined;
}

/** Whether a text names a party, at least by one of its characters, as an abbreviation does ("澜大" for "澜州大学"). */
const namesParty = (text: string, party: string) => [...party].some((char) => text.includes(char));

/**
 * Whether a chunk is about an event: it states most of the event's words, weighted, something
 * of what happened beyond the event's dates, no date that contradicts one the event names, and
 * (switch `eventParties`) every party the event names. A fact (a date) read from a chunk that is
 * not about the event answers some other event's question.
 */
export function isAboutEvent(
  event: string,
  chunk: Chunk__Output,
  switchedOff: readonly ReasoningSwitch[] = [],
): boolean {
  const text = `${chunk.title} ${chunk.text}`;
  if (weightedCoverage(event, chunk) < ABOUT_EVENT_SHARE || !datesAgree(event, text)) return false;
  const undated = event.replace(NAMED_DATE, ' ').trim();
  const dated = undated !== event.trim() && [...undated].length >= 2;
  if (dated && weightedCoverage(undated, chunk) < BEYOND_DATE_SHARE) return false;
  return !isOn(switchedOff, 'eventParties') || eventParties(event, undated).every((party) => namesParty(text, party));
}
