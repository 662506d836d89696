import {
  CHINESE_STOP_WORDS,
  containsStem,
  contentTerms,
  entityKey,
  fold,
  hasHan,
  namedSpans,
  sameStem,
  spanTokens,
} from '@hopline/text';
import { chineseQuestionEntities, chineseWords } from './chinese.js';
import { listedEvents, orderJudgement } from './event-list.js';
import { chineseOrderAsked } from './order-words.js';
import { escapeRegExp, QUESTION_WORDS } from './text.js';

/**
 * What the shape of a question says without any model: the entities it names (anchors), the
 * options of a choice, the kind of answer it wants, and its relation words ordered from the
 * innermost (next to an anchor) outwards.
 */

export type AnswerType = 'date' | 'number' | 'score' | 'yesno' | 'choice' | 'entity';

const AUXILIARY_OPENING = /^\s*(is|are|was|were|do|does|did|has|have|had|can|could|will|would|should)\b/i;
const DATE_QUESTION =
  /\b(when|what year|which year|what date|in what year|on what date|the date of)\b|何时|哪一年|什么时候/i;
const NUMBER_QUESTION =
  /\b(how many|how much|how long|how old|how tall|how far|what percentage|what number)\b|多少|几/i;
// The result of a match or game: two numbers, the sides' ("3–1", "4比2").
const SCORE_QUESTION = /\bscore\b|比分/i;

/** Named entities the question mentions: capitalised runs, quoted titles, and Chinese names (see chinese.ts). */
export function questionAnchors(question: string): string[] {
  const seen = new Set<string>();
  const anchors: string[] = [];
  const spans = namedSpans(question, spanTokens(question), { numbersOpenNames: true }).map((span) => span.text);
  if (hasHan(question)) spans.push(...chineseQuestionEntities(question));
  for (const text of spans) {
    const key = entityKey(text);
    if (!key || seen.has(key)) continue;
    if (contentTerms(text).every((term) => QUESTION_WORDS.has(term))) continue;
    seen.add(key);
    anchors.push(text);
  }
  // A quoted title contains capitalised runs of its own; the longer title is the entity.
  return anchors.filter(
    (anchor) =>
      !anchors.some(
        (other) =>
          other !== anchor && entityKey(other).includes(entityKey(anchor)) && entityKey(other) !== entityKey(anchor),
      ),
  );
}

const CHOICE_TAIL = /,\s*(?:the\s+)?([^,?]+?)\s+or\s+(?:the\s+)?([^,?]+?)\s*\??\s*$/i;
// "Between A and B, which …" asks to choose; "a collaboration between A and B" does not.
const CHOICE_BETWEEN =
  /^\s*(?:in\s+)?between\s+(?:the\s+)?(.+?)\s+and\s+(?:the\s+)?(.+?)(?:,|\s+which\b|\s+who\b|\?|$)/i;
const CHOICE_MIDDLE = /,\s*(?:the\s+)?([^,?]+?)\s+or\s+(?:the\s+)?([^,?]+?)\s*,/i;
const CHOICE_INLINE =
  /\b(?:which|who|what)\b[^,?]*?\b(?:is|was|are|were|has|had|came|come)?\s*[^,?]*?[,:]?\s+(?:the\s+)?([A-Z0-9"'“][^,?]*?)\s+or\s+(?:the\s+)?([A-Z0-9"'“][^,?]*?)\s*\??\s*$/;
// "Is A or B taller?", "Was A or B founded first?": a question that opens with its verb and ends
// on a comparative asks which of the two; the options are all between, commas and all ("University
// of Velmar, Tenbury").
const CHOICE_COMPARATIVE_QUESTION =
  /^\s*(?:[Ii]s|[Ww]as|[Aa]re|[Ww]ere)\s+(?:the\s+)?(.+?)\s+or\s+(?:the\s+)?(.+?)\s+(?:\p{Ll}+\s+)?(?:\p{Ll}{2,}er|first|last|earlier|later|more\s+\p{Ll}+|less\s+\p{Ll}+)\s*\??\s*$/u;
const CHINESE_CHOICE =
  /(?:对比|比较|区别)?\s*([^，,、和与跟及]+?)\s*(?:和|与|跟|及|还是|、)\s*([^，,的？?]+?)(?:的|，|,|？|\?|$)/;

// A question that asks which one, or who: its named options may stand anywhere in it.
const ASKS_WHICH = /^\s*(?:which|who|whom)\b/i;
// What offers the options joined by "and" to choose from ("born first out of A and B").
const OFFERS_JOINED = String.raw`\b(?:out\s+of|between|among)\s+(?:the\s+)?`;

/**
 * The options of a which-or-who question as two of the names it gives, joined by "or" ("Which
 * documentary A or B was produced first?") or by "and" after a word that offers them ("Who was
 * born first out of A and B?"), wherever they stand in it: the names bound each option, where
 * the patterns above need a comma or the question's end to.
 */
function namedOptions(question: string): string[] {
  if (!ASKS_WHICH.test(question)) return [];
  const anchors = questionAnchors(question);
  for (const first of anchors) {
    for (const second of anchors) {
      if (first === second) continue;
      const [one, other] = [escapeRegExp(first), escapeRegExp(second)];
      const joined = new RegExp(
        `(?:${one}\\s+or\\s+(?:the\\s+)?${other}|${OFFERS_JOINED}${one}\\s+and\\s+(?:the\\s+)?${other})(?![\\p{L}\\p{N}])`,
        'iu',
      );
      if (joined.test(question)) return [first, second];
    }
  }
  return [];
}

// A remark after the question mark ("… A or B? (asked again)") is no part of the question.
const REMARK_AFTER_QUESTION = /\?\s+[^?]+$/;

/** The options of a "which …, A or B?" question ("which X, A or B, is…"), of "is A or B taller?", of "between A and B", or two names it offers (namedOptions); [] when there are none. */
export function choiceOptions(question: string): string[] {
  const asked = question.replace(REMARK_AFTER_QUESTION, '?');
  const match =
    CHOICE_TAIL.exec(asked) ??
    CHOICE_MIDDLE.exec(asked) ??
    CHOICE_BETWEEN.exec(asked) ??
    CHOICE_INLINE.exec(asked) ??
    CHOICE_COMPARATIVE_QUESTION.exec(asked);
  if (!match?.[1] || !match[2]) return namedOptions(asked);
  const clean = (option: string) => option.replace(/^["'“‘]|["'”’]$/g, '').trim();
  const options = [clean(match[1]), clean(match[2])];
  return options.every((option) => contentTerms(option).length > 0) ? options : [];
}

/** The options of a Chinese comparison ("对比 A 和 B 的…"); [] when there are none. */
export function chineseComparisonOptions(question: string): string[] {
  if (!/对比|比较|区别|分别|还是/.test(question)) return [];
  const match = CHINESE_CHOICE.exec(question.replace(/^.*?(对比|比较)/, ''));
  if (!match?.[1] || !match[2]) return [];
  return [match[1].trim(), match[2].trim()].filter((option) => option.length > 0);
}

// Comparatives that ask the order wherever they stand ("A是否早于B"); asked with "哪个/谁" or a
// choice ("A还是B先…") the order is read on segmented words (chineseOrderAsked).
const EARLIER =
  /\b(first|earlier|earliest|older|oldest|before|sooner)\b|更早|最早|较早|得早|早于|率先|先于|在[前先](?=[？?。，,]|$)/i;
const LATER =
  /\b(later|latest|younger|youngest|after|last|newer|more recent(?:ly)?)\b|更晚|最晚|较晚|得晚|晚于|最迟|更迟|较迟|迟于|在后(?=[？?。，,]|$)/i;
// Asking the order of the events ("谁先谁后", "孰早孰晚", "先后顺序") is answered by naming the first.
const ORDER = /(?:哪|谁|孰)[^，,？?]{0,3}[先早][^，,？?]{0,3}(?:哪|谁|孰)[^，,？?]{0,3}[后晚迟]|先后(?:顺序|次序)/;
const SAME_PERIOD = /\bsame\s+(day|month|year)\b|同一?个?(天|日|月|年)|同(?:一)?(?:个)?月份/i;

export type Period = 'day' | 'month' | 'year';

/** Whether a question asks if events fell in the same day, month or year, and which. */
export function samePeriod(question: string): Period | undefined {
  const match = SAME_PERIOD.exec(question);
  // "同月份" names its unit outside the groups.
  const unit = match ? (match[1] ?? match[2] ?? '月') : undefined;
  if (!unit) return undefined;
  return /day|天|日/i.test(unit) ? 'day' : /month|月/i.test(unit) ? 'month' : 'year';
}

/**
 * The options a question compares: a choice's two ("which…, A or B?"), a Chinese comparison's
 * ("对比 A 和 B"), or, for a question about when several events happened (which came first,
 * whether they fell in the same month), the events it lists.
 */
export function comparedOptions(question: string): string[] {
  const choice = choiceOptions(question);
  if (choice.length === 2) return choice;
  const events = timedEvents(question);
  return events.length >= 2 ? events : chineseComparisonOptions(question);
}

/** The events a question about their times lists (which came first, whether in the same month); [] otherwise. */
export function timedEvents(question: string): string[] {
  const judged = orderJudgement(question);
  if (judged) return [...judged.events];
  return dateComparison(question) || samePeriod(question) ? listedEvents(question) : [];
}

/**
 * Whether a question compares by date, and which end it wants: "which came out first" the
 * earlier, "who is younger" the later; undefined when it asks neither or both.
 */
export function dateComparison(question: string): 'earlier' | 'later' | undefined {
  // "A比B早吗" judges the first event's end: its dates are compared as a which-first question's.
  const judged = orderJudgement(question);
  if (judged) return judged.end;
  if (ORDER.test(question)) return 'earlier';
  const asked = hasHan(question) ? chineseOrderAsked(question) : undefined;
  const earlier = EARLIER.test(question) || asked === 'earlier';
  const later = LATER.test(question) || asked === 'later';
  if (earlier === later) return undefined;
  return earlier ? 'earlier' : 'later';
}

const COMPARATIVE =
  /\b(first|earlier|later|older|younger|longer|shorter|taller|larger|bigger|smaller|more|less|fewer|further|higher|lower|closer|farther)\b/i;

/** Whether a question compares a measure ("taller", "more issues", "further south") rather than asking of a property. */
export const asksComparative = (question: string): boolean => COMPARATIVE.test(question);

// What joins the things a question compares: "A and B", "A or B", "A、B和C", "A还是B".
const JOINED = /\b(?:and|or)\b|和|与|跟|及|、|还是/i;

/**
 * Whether a question compares the times of several things it joins ("A和B是在同一个月吗", "Was X
 * or Y founded first?"): what it asks is read from their own dates, with no entity between them.
 * A superlative of one thing ("the oldest tavern in Wapping") joins nothing and compares nothing.
 */
export function comparesTimesOfSeveral(question: string): boolean {
  const byTime = dateComparison(question) !== undefined || samePeriod(question) !== undefined;
  return byTime && (JOINED.test(question) || orderJudgement(question) !== undefined);
}

// "<event>当天，<question>", "On the day X opened, …": the event only sets the time asked about.
const TIME_FRAME =
  /\S(?:的)?(?:当天|当日|同一天|当月|同月)[，,]|^\s*(?:on|in) the (?:same )?(?:day|month|week)\b[^,，?]*[,，]/iu;

/**
 * Whether a question sets its time by another event ("X当天，Y做了什么？"): that event's words
 * are stated in its own document, not in the answer's, and name no bridge to it.
 */
export const framedInTime = (question: string): boolean => TIME_FRAME.test(question);

export function answerType(question: string): AnswerType {
  if (choiceOptions(question).length === 2) return 'choice';
  if (AUXILIARY_OPENING.test(question)) return 'yesno';
  if (DATE_QUESTION.test(question)) return 'date';
  if (SCORE_QUESTION.test(question) && !NUMBER_QUESTION.test(question)) return 'score';
  if (NUMBER_QUESTION.test(question)) return 'number';
  return 'entity';
}

/**
 * The question's content terms that are neither anchors nor question words, nearest an anchor
 * first: in "the castle in the city where the performer of X formed", "performer" and
 * "formed" come before "city", and "castle" last — the order the hops resolve them in.
 */
export function relationTerms(question: string, anchors: readonly string[]): string[] {
  if (hasHan(question)) return chineseRelationTerms(question, anchors);
  const anchorTerms = anchors.flatMap((anchor) => contentTerms(anchor));
  const tokens = spanTokens(question);
  const anchorPositions: number[] = [];
  tokens.forEach((token, index) => {
    if (token.term && containsStem(anchorTerms, token.term)) anchorPositions.push(index);
  });
  const distance = new Map<string, number>();
  tokens.forEach((token, index) => {
    const term = token.term;
    if (!term || QUESTION_WORDS.has(term) || containsStem(anchorTerms, term)) return;
    const nearest = anchorPositions.reduce(
      (best, position) => Math.min(best, Math.abs(position - index)),
      Number.POSITIVE_INFINITY,
    );
    distance.set(term, Math.min(distance.get(term) ?? Number.POSITIVE_INFINITY, nearest));
  });
  for (const term of contentTerms(question)) {
    if (!distance.has(term) && !QUESTION_WORDS.has(term) && !containsStem(anchorTerms, term))
      distance.set(term, Number.POSITIVE_INFINITY);
  }
  return [...distance.entries()].sort((a, b) => a[1] - b[1]).map(([term]) => term);
}

/**
 * relationTerms for a Chinese question: its content words as the segmenter reads them (one
 * reading each: "负责人", not also "负责" and "责人"), nearest an anchor first.
 */
function chineseRelationTerms(question: string, anchors: readonly string[]): string[] {
  const anchorTerms = anchors.flatMap((anchor) => contentTerms(anchor));
  const anchorSpans = anchors.flatMap((anchor) => {
    const at = question.indexOf(anchor);
    return at >= 0 ? [{ start: at, end: at + anchor.length }] : [];
  });
  const distance = new Map<string, number>();
  for (const word of chineseWords(question)) {
    const term = hasHan(word.word) ? fold(word.word) : contentTerms(word.word)[0];
    if (!term || QUESTION_WORDS.has(term) || CHINESE_STOP_WORDS.has(term) || containsStem(anchorTerms, term)) continue;
    if (anchorSpans.some((span) => word.start >= span.start && word.end <= span.end)) continue;
    const gap = anchorSpans.reduce(
      (best, span) =>
        Math.min(best, word.start >= span.end ? word.start - span.end : Math.max(0, span.start - word.end)),
      Number.POSITIVE_INFINITY,
    );
    distance.set(term, Math.min(distance.get(term) ?? Number.POSITIVE_INFINITY, gap));
  }
  return [...distance.entries()].sort((a, b) => a[1] - b[1]).map(([term]) => term);
}

/** The words of the question that the terms came from, as written: search engines stem their own way. */
export function questionWords(question: string, terms: readonly string[]): string[] {
  const tokens = spanTokens(question);
  return terms.map((term) => tokens.find((token) => token.term === term)?.text ?? term);
}

// What may stand before "A and B" when the question is about both: nothing, a copula, "of", "both".
const SUBJECT_OF_BOTH = /(?:^\s*|\b(?:are|were|is|was|do|did|does|have|has|of|both)\s+(?:the\s+)?)$/;

/**
 * Two named entities joined by "and" where the question is about both: as its subject
 * ("A and B were both…"), after a copula ("what type of movies are A and B?") or "of" ("born
 * first out of A and B"). "Won a Pulitzer Prize and Hugo Awards" lists attributes instead.
 */
export function conjoinedAnchors(question: string, anchors: readonly string[]): string[] {
  if (anchors.length < 2) return [];
  const lower = question.toLowerCase();
  for (const first of anchors) {
    for (const second of anchors) {
      if (first === second) continue;
      for (const joiner of [' and ', ' & ', ' and the ']) {
        const at = lower.indexOf(`${first.toLowerCase()}${joiner}${second.toLowerCase()}`);
        if (at >= 0 && SUBJECT_OF_BOTH.test(lower.slice(0, at))) return [first, second];
      }
    }
  }
  return [];
}

/** Whether two entity names refer to the same thing by their content terms. */
export function sameEntity(a: string, b: string): boolean {
  const keyA = entityKey(a);
  const keyB = entityKey(b);
  if (!keyA || !keyB) return false;
  if (keyA === keyB) return true;
  const termsA = keyA.split(' ');
  const termsB = keyB.split(' ');
  return termsA.length === termsB.length && termsA.every((term, index) => sameStem(term, termsB[index] as string));
}
