import type { TaggedWord } from '@hopline/text';
import { hasHan, taggedWords } from '@hopline/text';
import type { End } from './order-words.js';
import { asksSequence, choiceOrderAt, JUDGEMENT_ADVERBS, judgedOrder } from './order-words.js';

/**
 * The events a Chinese question lists before it asks about their times ("A、B和C，哪个…", "A与B
 * 是在同一个月…吗"): a multi-focus question, one focus per event. Read from the grammar of
 * Chinese lists alone: clauses, the interrogative or summary word where the asking starts, and
 * the conjunctions between items; nothing here knows a topic or a phrasing of one data set.
 */

// Clause boundaries; the list sits in the clauses before the asking one (or after, "以下…：A、B").
const CLAUSE = /[，,：:；;]/;
// Where the asking starts, as jieba segments it: interrogatives, summaries of the list ("这些",
// "两者"), distributive adverbs, and a copula or "同" that opens a same-time predicate.
const ASKING_WORDS = new Set([
  '哪',
  '哪个',
  '哪一个',
  '哪一',
  '哪项',
  '哪一项',
  '哪件',
  '哪些',
  '谁',
  '是否',
  '是不是',
  '均',
  '都',
  '分别',
  '相比',
  '这',
  '这些',
  '这两个',
  '这三个',
  '这两件',
  '两者',
  '三者',
  '前者',
  '后者',
  '同一',
  '同一个',
  '同一天',
  '同一年',
  '同月',
  '同年',
  '同日',
]);
// "是" opens the predicate when a same-time or locative phrase follows it ("是在…", "是同一…").
const COPULA_OPENERS = /^(?:在|同|否|不是)/;
// A clause that only points at the list ("在以下事件中", "下列事件里") or only sets the time
// ("2022年8月，…") is no item.
const POINTER_CLAUSE =
  /以下|下列|下面|如下|^[在于]?\d{4}年(?:\d{1,2}月(?:\d{1,2}[日号])?)?(?:年?[初中底末里内]?|[上下]半年|[上中下]旬)$/;
// Nor is one that opens by naming the source the question reads ("根据报道", "据悉"): whole
// words, so an item that opens with a word holding "据" ("据点建设完成") stays.
const SOURCE_WORDS = new Set(['据', '根据', '依据', '按照', '据悉', '据称', '据报道', '据报']);
// A list framed as the set the question picks from ends in a locative ("A和B中", "在A与B之间"),
// maybe after a count that sums it up ("A、B两件事中", "A和B这两个事件里"): the frame is no part
// of the last item. Locatives are whole words, so "集中" or "空中" keeps its "中".
const FRAME_LOCATIVES = new Set(['中', '里', '之中', '当中', '其中', '之间', '中间']);
const LIST_COUNT =
  /(?:这|那)?(?:[两二三四五六七八九十几]+(?:个|件|项|起|则|条|次)|些)(?:事件|事情|大事|事|活动|新闻)?$|[两二三四五]者$/;
// A quotation or title encloses one name, whatever it holds: a comma («关于《雨夜归乡，三叔…》的评论»),
// a "、" («“守望山河、共话明天”») or a "和" («'望和号'»). So nothing inside one ends a clause or an
// item, nor starts the asking. An ASCII quote right after a Latin letter or digit is an
// apostrophe ("Macy's"), not an opening quote.
const QUOTED = /《[^》]*》|“[^”]*”|「[^」]*」|『[^』]*』|‘[^’]*’|(?<![A-Za-z0-9])'[^']*'|"[^"]*"/g;

/** The positions of `text` that a match of `pattern` (a global one) covers. */
function coveredPositions(text: string, pattern: RegExp): Set<number> {
  const covered = new Set<number>();
  for (const match of text.matchAll(pattern))
    for (let at = match.index; at < match.index + match[0].length; at += 1) covered.add(at);
  return covered;
}
const quotedPositions = (text: string) => coveredPositions(text, QUOTED);

// Strong separators end an item wherever they stand; the weak ones also join parts of one event
// ("哈雷摩托与钱江摩托签署协议"), so each is split at most once, where both sides read as events.
const STRONG = new Set(['、', '以及', '还是', '或者', '或是', '抑或', '或']);
const WEAK = ['和', '与', '及', '跟'];
// The segmenter often glues a weak conjunction to its neighbour ("议和", "和保罗"), so they are
// found by character; these common words hold one without joining anything.
const WORDS_WITH_WEAK =
  /和平|和谐|和解|和睦|和约|温和|缓和|柔和|总和|饱和|随和|参与|与会|给与|赋与|及时|及格|涉及|普及|危及|波及|顾及|来得及|来不及|跟踪|跟进|跟随|紧跟|鞋跟/g;
const MIN_ITEM = 2;

const isAsking = (words: readonly TaggedWord[], index: number): boolean => {
  const word = words[index] as TaggedWord;
  // "哪…" (and the literary "孰…") asks unless the segmenter read a name ("哪吒").
  if (ASKING_WORDS.has(word.word) || asksSequence(words, index)) return true;
  if (/^[哪孰]/.test(word.word) && !word.tag.startsWith('n')) return true;
  return word.word === '是' && COPULA_OPENERS.test(words[index + 1]?.word ?? '');
};

/** The text of a clause before its asking words, and whether it had any. */
function beforeAsking(clause: string): { head: string; asks: boolean } {
  const words = taggedWords(clause);
  const quoted = quotedPositions(clause);
  const asking = words.findIndex((word, index) => !quoted.has(word.start) && isAsking(words, index));
  const at = asking >= 0 ? asking : choiceOrderAt(words);
  if (at < 0) return { head: clause, asks: false };
  return { head: clause.slice(0, (words[at] as TaggedWord).start), asks: true };
}

/** A list part without the frame around it ("A和B这两件事中" → "A和B"). */
function withoutFrame(part: string): string {
  const last = taggedWords(part).at(-1);
  if (!last || !FRAME_LOCATIVES.has(last.word)) return part;
  return part.slice(0, last.start).replace(LIST_COUNT, '').trim();
}

const hasVerb = (text: string) => taggedWords(text).some((word) => word.tag.startsWith('v'));
// An item loses what belongs to the question around the list: a leading conjunction, locative,
// polite opener, comparing verb or the copula of "或者是", a "关于" over the whole list (one that
// opens a "的" phrase is the item's own, "关于X的评论"), and a trailing copula or "happened (…得)
// in" that opens the predicate ("，和B", "请问A", "B是发生在", "B发生得").
const trimItem = (text: string) =>
  text
    .replace(/^[\s在]+|^(?:和|与|以及|及|还有|是|请问|试问|比较|对比)/u, '')
    .replace(/^(?:关于|对于)(?!.*的)/u, '')
    .replace(/(?:是|都|均)?(?:发生|举行|举办)?得?(?:在|于)?[\s的]*$/u, '')
    .trim();

/** Where a weak conjunction stands in `span`, outside quotations and the common words that hold one. */
function weakConjunctions(span: string): number[] {
  const held = new Set([...quotedPositions(span), ...coveredPositions(span, WORDS_WITH_WEAK)]);
  return span.split('').flatMap((char, at) => (WEAK.includes(char) && !held.has(at) ? [at] : []));
}

/** Whether a span joins several items: list punctuation, a strong separator or a weak conjunction. */
export const joinsItems = (span: string): boolean =>
  /[、，,]/.test(span.replace(QUOTED, '')) || listsStrongly(span) || weakConjunctions(span).length > 0;

/**
 * One span split at one weak conjunction: where both sides have a verb (two events, not two
 * parties of one), the more common list conjunction first, then the most even split.
 */
export function splitWeak(span: string): string[] {
  const candidates = weakConjunctions(span)
    .map((at) => ({
      left: trimItem(span.slice(0, at)),
      right: trimItem(span.slice(at + 1)),
      rank: WEAK.indexOf(span[at] as string),
    }))
    .filter(({ left, right }) => [...left].length >= MIN_ITEM && [...right].length >= MIN_ITEM)
    .map((candidate) => ({
      ...candidate,
      events: hasVerb(candidate.left) && hasVerb(candidate.right),
      imbalance: Math.abs([...candidate.left].length - [...candidate.right].length),
    }))
    .sort((a, b) => Number(b.events) - Number(a.events) || a.rank - b.rank || a.imbalance - b.imbalance);
  const best = candidates[0];
  return best ? [best.left, best.right] : [span];
}

// Words that may stand in a bare party of an event ("澜州东湖区", "莫兰德"): names and words the
// segmenter does not know (foreign names), or a one-character noun suffix ("市", "区").
const isNameWord = (word: TaggedWord) =>
  /^(?:nr|ns|nt|nz|x|eng)/.test(word.tag) || (word.tag === 'n' && [...word.word].length === 1);
// Words that may open an event's subject before its predicate: the name words and other nouns.
const isSubjectWord = (word: TaggedWord) => isNameWord(word) || /^(?:n|j)/.test(word.tag);

// Parties listed together are of one kind: places with places ("澜州东湖区、西岭区"), people
// with people. A place before a word the segmenter does not know ("澜州封港") is an event.
const kindOf = (word: TaggedWord) =>
  word.tag.startsWith('ns') ? 'place' : word.tag.startsWith('nt') ? 'organisation' : word.tag === 'n' ? 'noun' : 'name';
const contentWords = (text: string) => taggedWords(text).filter((word) => word.word.trim().length > 0);

/** An event's subject and the predicate after it ("青川区开始实施改革": "青川区", "开始实施改革"). */
function subjectAndPredicate(item: string): { subject: TaggedWord[]; predicate: string } | undefined {
  const words = contentWords(item);
  const at = words.findIndex((word) => !isSubjectWord(word));
  if (at <= 0) return undefined;
  const predicate = item.slice((words[at] as TaggedWord).start).trim();
  return hasVerb(predicate) ? { subject: words.slice(0, at), predicate } : undefined;
}

/** Whether an item is only a party of the subject's kind (a bare name), not an event of its own. */
function isPartyLike(item: string, subject: readonly TaggedWord[]): boolean {
  const words = contentWords(item);
  const last = words.at(-1);
  return last !== undefined && words.every(isNameWord) && kindOf(last) === kindOf(subject.at(-1) as TaggedWord);
}

/**
 * Parties listed before one predicate ("A、B和C开始实施…", "A和B访问中国") are one event each:
 * every party gets the predicate, so its sub-query and the check that a chunk is about it see the
 * whole event. Only a run of bare names directly before the item that states the predicate.
 */
function sharePredicate(items: readonly string[]): string[] {
  const last = items.at(-1);
  const event = last === undefined ? undefined : subjectAndPredicate(last);
  if (!event) return [...items];
  let from = items.length - 1;
  while (from > 0 && isPartyLike(items[from - 1] as string, event.subject)) from -= 1;
  return items.map((item, index) => (index >= from && index < items.length - 1 ? `${item}${event.predicate}` : item));
}

/** Whether a span lists with a strong separator ("、", "或", "以及"), not only joins with "和". */
export const listsStrongly = (span: string): boolean => strongSeparators(span).length > 0;

/** The strong separators of a span, outside quotations. */
function strongSeparators(span: string): TaggedWord[] {
  const quoted = quotedPositions(span);
  return taggedWords(span).filter((word) => STRONG.has(word.word) && !quoted.has(word.start));
}

/** The items of a list span: strong separators first; a last item after "、" may hold one "和". */
export function listItems(span: string): string[] {
  const items: string[] = [];
  let from = 0;
  let lastSeparator = '';
  for (const word of strongSeparators(span)) {
    items.push(span.slice(from, word.start));
    from = word.end;
    lastSeparator = word.word;
  }
  items.push(span.slice(from));
  const cleaned = items.map(trimItem).filter((item) => [...item].length >= MIN_ITEM);
  if (cleaned.length === 1) return sharePredicate(splitWeak(cleaned[0] as string));
  // "A、B和C": the last item joins the list with a weak conjunction; "A、B还是C和D" does not.
  if (lastSeparator === '、' && cleaned.length >= 2) {
    return sharePredicate([...cleaned.slice(0, -1), ...splitWeak(cleaned.at(-1) as string)]);
  }
  return sharePredicate(cleaned);
}

/**
 * Whether a clause points at the list, names the question's source or sets the scene: a
 * "在/于…中/里" around no list ("在疫情期间的报道中") is the setting; around one ("在A和B中")
 * it is the frame of the list.
 */
function isPointer(clause: string): boolean {
  const bare = withoutFrame(clause);
  if (/^[在于]/.test(clause) && bare !== clause && !joinsItems(bare)) return true;
  return POINTER_CLAUSE.test(bare) || SOURCE_WORDS.has(taggedWords(bare)[0]?.word ?? '');
}

/**
 * The events a Chinese question lists, in order; [] when it lists fewer than two. Only for a
 * question about the events' times (the caller decides that): elsewhere a "和" joins anything.
 */
export function listedEvents(question: string): string[] {
  if (!hasHan(question)) return [];
  const quoted: string[] = [];
  const masked = question.replace(QUOTED, (text) => `〔${quoted.push(text) - 1}〕`);
  const clauses = masked
    .replace(/[？?！!。]+\s*$/u, '')
    .split(CLAUSE)
    .map((clause) => clause.replace(/〔(\d+)〕/g, (_, index: string) => quoted[Number(index)] ?? ''))
    .map((clause) => clause.trim())
    .filter((clause) => clause.length > 0);
  // A clause that is only the frame ("在这两件事中", "这些事件里") holds asking words ("这两件",
  // "这些") that ask nothing: the question asks in a later clause.
  const summary = (clause: string) => withoutFrame(clause).replace(/^[在于]/, '') === '';
  const asking = clauses.findIndex((clause) => !summary(clause) && beforeAsking(clause).asks);
  if (asking < 0) return [];
  const askingHead = beforeAsking(clauses[asking] as string).head.trim();
  const head = withoutFrame(askingHead);
  const before = clauses
    .slice(0, asking)
    .filter((clause) => !summary(clause) && !isPointer(clause))
    .map(withoutFrame)
    .filter((clause) => clause.length > 0);
  const after = clauses.slice(asking + 1);
  // The list precedes the asking words (its last part in the asking clause's head), or, when
  // nothing precedes them, follows them ("以下事件中哪个最早：A、B还是C").
  const pointer = isPointer(askingHead);
  const parts = [...before, pointer ? '' : trimItem(head)].filter((part) => [...part].length >= MIN_ITEM);
  const span = parts.length > 0 && !pointer ? parts : after;
  const items = span.length > 1 ? span.flatMap((part) => listItems(part)) : listItems(span[0] ?? '');
  return items.length >= 2 ? items : [];
}

// A time the question opens with, in digits: a year, maybe its month and day, or a part of one
// ("2031年", "2031年4月", "2031年上半年", "2031年4月初").
const OPENING_TIME =
  /^(?:请问)?\s*([在于])?\s*(\d{4}\s*年(?:\s*\d{1,2}\s*月(?:\s*\d{1,2}\s*[日号])?)?(?:[上下]半年|[初底末]|[上中下]旬)?)/u;
// What makes that time the frame of everything after it rather than the date of the first event:
// a comma that ends its clause ("2031年4月，A和B…"), or a word that makes it a span ("2031年内",
// "2031年期间", "2031年以来"), read as jieba segments what follows, so "内蒙古" or "中国" is a
// name, not a span. After "在" it frames whatever follows ("在2031年的A和B中").
const SPAN_WORDS = new Set(['，', ',', '内', '之内', '期间', '以来', '中', '当中', '里']);
const STATES_A_DATE = /\d{4}\s*年|\d{1,2}\s*月|[去今明前]年/u;

/**
 * The time a question sets its whole list in, where it says so: a clause of its own
 * ("2031年4月，A和B是在同一天吗"), a span ("2031年内A、B和C分别…") or a frame opened by "在"
 * ("在2031年的A和B中"). A date that only opens the first item ("2031年4月3日A和B哪个早") is
 * that event's: nothing in its grammar says it is the others'.
 */
export function listSetting(question: string): string | undefined {
  const opening = OPENING_TIME.exec(question);
  if (!opening?.[2]) return undefined;
  const next = taggedWords(question.slice(opening[0].length))[0]?.word;
  const framed = opening[1] !== undefined || (next !== undefined && SPAN_WORDS.has(next));
  return framed ? opening[2].replace(/\s+/g, '') : undefined;
}

/** An event as it is looked up: in the list's setting, unless it states a date of its own. */
export const inSetting = (event: string, setting: string | undefined): string =>
  setting === undefined || STATES_A_DATE.test(event) ? event : `${setting}${event}`;

/** A yes/no question whether one event came before or after another: the two events, in the order named. */
export interface OrderJudgement {
  events: [string, string];
  /** Where the first event is said to stand against the second. */
  end: End;
}

// The asking words a judgement's events leave behind: "A是否…", "…B吗？".
const ASKING_AROUND = new RegExp(`${[...JUDGEMENT_ADVERBS].join('|')}|[吗么嘛？?。！!\\s]+$`, 'gu');

/**
 * The events of a yes/no question about their order ("A比B早吗", "A是否在B之前发生"), each
 * trimmed as a listed item is (the copula, "发生在", "发生得" that open the predicate); undefined
 * for any other question.
 */
export function orderJudgement(question: string): OrderJudgement | undefined {
  if (!hasHan(question)) return undefined;
  const judged = judgedOrder(taggedWords(question));
  if (!judged) return undefined;
  // The first event opens its clause ("据报道，A比B早吗").
  const clauseStart = Math.max(
    ...[...question.slice(0, judged.firstEnd)].map((char, at) => (CLAUSE.test(char) ? at + 1 : 0)),
    0,
  );
  const event = (from: number, to: number) => trimItem(question.slice(from, to).replace(ASKING_AROUND, ''));
  const first = event(clauseStart, judged.firstEnd);
  const second = event(judged.secondStart, judged.secondEnd);
  if ([...first].length < MIN_ITEM || [...second].length < MIN_ITEM) return undefined;
  return { events: [first, second], end: judged.end };
}
