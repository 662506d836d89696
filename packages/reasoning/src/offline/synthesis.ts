import type { Chunk__Output } from '@hopline/contracts';
import { containsStem, contentTerms, fold, writtenInChinese } from '@hopline/text';
import type { EvidenceItem, SynthesisHop, SynthesisInput } from '../reasoner/reasoner.js';
import type { StatedDate } from './answers.js';
import { yearlessDateIn } from './chinese.js';
import { isAboutEvent, weightedCoverage } from './grade.js';
import { compareDates, datedYearIn, datesIn, firstDateIn, inSamePeriod, parseDate, yearOf } from './answers.js';
import type { Period } from './question.js';
import { comparedOptions, dateComparison, questionAnchors, relationTerms, sameEntity, samePeriod } from './question.js';
import { isAbout } from './bridge.js';
import { determinedRoleNoun, expandRelations } from './relations.js';
import type { RespectiveItem } from './respectively.js';
import { respectiveItems } from './respectively.js';
import { orderJudgement } from './event-list.js';
import type { CompoundQuestion } from './compound.js';
import { compoundParts } from './compound.js';
import { fitsQuestion } from './fit.js';
import { judgeJointly, optionStatingMost } from './judgement.js';
import { unfoundEntities, unfoundOptions } from './missing.js';
import type { TitleConventions } from './text.js';
import { sentences, states, titleConventions, writtenAs } from './text.js';
import { isOn } from '../switches.js';

/**
 * Extractive synthesis: the answer first, cited to a chunk that states it, then each hop's
 * sentence that states that hop's answer, quoted from the evidence, each once and ending in the
 * [n] of the chunk it comes from. An answer no evidence states, or a broken chain, gets an
 * abstention that says what was found (cited) and what was not. Written in the question's
 * language (English or Chinese).
 */

interface Phrasebook {
  stop: string;
  /** Between sentences. */
  space: string;
  /** Between the items of a list. */
  listSeparator: string;
  cannotAnswer: string;
  found: string;
  notFound: string;
  nothingFound: string;
  remaining: string;
  unstated: (answer: string) => string;
  yes: string;
  no: string;
  /** What is missing when a comparison by date finds dates too imprecise to decide it. */
  undated: string;
  /** What is missing when a comparison by date finds no date for these options. */
  undatedEvents: (options: readonly string[]) => string;
  /** What is missing when no evidence is about these items of a distributive question with what it asks of them. */
  unaboutItems: (items: readonly string[]) => string;
  /** What is missing when the chain's answer is not of the kind the question asks for. */
  unfit: (answer: string) => string;
  /** What is missing when a broken chain found no document about these entities it looked for. */
  unfound: (entities: readonly string[]) => string;
  /** What is missing when every option of a which-first question falls on one date. */
  tied: string;
  /** The note after an answer that read dates stated without a year in the other events' years. */
  yearless: (dates: readonly Cited[], years: readonly number[]) => string;
  /**
   * The note after an answer that took the newest document's date where the documents disagree:
   * an uncited sentence that says so, then the dates, each cited to its document, the one used first.
   */
  newest: (option: string, chosen: Cited, others: readonly Cited[]) => string;
  /** The note after an answer that kept the best-ranked document's date, none being known to be newer. */
  unsettled: (option: string, kept: Cited, others: readonly Cited[]) => string;
  /** "X [a]: 2009 [b], before Y, 2014 [c]." — the date comparison that decided a choice. */
  byDate: (chosen: DatedClaim, other: DatedClaim, earlier: boolean) => string;
}

interface Cited {
  text: string;
  index: number;
}

/** An option of a date comparison: its name and date, each with the number of a chunk stating it. */
interface DatedClaim {
  name: Cited;
  date: Cited;
}

/** Dates each cited to the chunk that states it: "2031年3月19日 [2]；2031年8月9日 [3]". */
const dateList = (claims: readonly Cited[], separator: string) =>
  claims.map((claim) => `${claim.text} [${claim.index}]`).join(separator);

const ENGLISH: Phrasebook = {
  stop: '.',
  space: ' ',
  listSeparator: ', ',
  cannotAnswer: 'I cannot answer this from the knowledge base: the chain of evidence is incomplete.',
  found: 'What was found: ',
  notFound: 'What was not found: ',
  nothingFound: 'No retrieved document supports any step of the chain.',
  remaining: 'the evidence for the remaining part of the question',
  unstated: (answer) => `a document that states "${answer}"`,
  yes: 'yes',
  no: 'no',
  undated: 'a document that states the date of every event compared',
  undatedEvents: (options) =>
    `a document about ${options.map((option) => `"${option}"`).join(' or ')} that states its date`,
  unaboutItems: (items) =>
    `a document about ${items.map((item) => `"${item}"`).join(' or ')} that states what the question asks of it`,
  unfit: (answer) =>
    `a document that states what the question asks ("${answer}", where the chain ended, is not of that kind)`,
  unfound: (entities) => `a document about ${entities.map((entity) => `"${entity}"`).join(' or ')}`,
  tied: 'a date that tells the events compared apart',
  yearless: (dates, years) =>
    years.length === 0
      ? `${dateList(dates, ', ')}: stated without a year, compared as in one year.`
      : `${dateList(dates, ', ')}: stated without a year, read as in ${years.join(' or ')}, the year the other events' documents give${years.length > 1 ? '; the answer is the same in each' : ''}.`,
  newest: (option, chosen, others) =>
    `The documents disagree on the date of "${option}"; the newest document's date is used. ${dateList([chosen, ...others], '; ')}.`,
  unsettled: (option, kept, others) =>
    `The documents disagree on the date of "${option}" and none is known to be newer; the date used is the one of the document that matches it best. ${dateList([kept, ...others], '; ')}.`,
  byDate: (chosen, other, earlier) =>
    `${chosen.name.text} [${chosen.name.index}]: ${chosen.date.text} [${chosen.date.index}], ${earlier ? 'before' : 'after'} ${other.name.text}, ${other.date.text} [${other.date.index}].`,
};

const CHINESE: Phrasebook = {
  stop: '。',
  space: '',
  listSeparator: '、',
  cannotAnswer: '无法根据知识库回答：证据链不完整。',
  found: '已找到：',
  notFound: '未找到：',
  nothingFound: '没有检索到支持任何一步推理的文档。',
  remaining: '问题其余部分的证据',
  unstated: (answer) => `陈述“${answer}”的文档`,
  yes: '是的',
  no: '不是',
  undated: '陈述每个被比较事件日期的文档',
  undatedEvents: (options) => `关于${options.map((option) => `“${option}”`).join('、')}并陈述其日期的文档`,
  unaboutItems: (items) => `关于${items.map((item) => `“${item}”`).join('、')}并陈述问题所问之事的文档`,
  unfit: (answer) => `陈述问题所问之事的文档（推理链停在的“${answer}”不是所问的那类答案）`,
  unfound: (entities) => `关于${entities.map((entity) => `“${entity}”`).join('、')}的文档`,
  tied: '能分出这些事件先后的日期',
  yearless: (dates, years) =>
    years.length === 0
      ? `${dateList(dates, '；')}：文档未写年份，此处按同一年比较。`
      : `${dateList(dates, '；')}：文档未写年份，此处按其余事件文档的年份（${years.map((year) => `${year}年`).join('或')}）比较${years.length > 1 ? '，各年份结论相同' : ''}。`,
  newest: (option, chosen, others) =>
    `文档对“${option}”的日期说法不一，此处采用最新文档的日期。${dateList([chosen, ...others], '；')}。`,
  unsettled: (option, kept, others) =>
    `文档对“${option}”的日期说法不一，且无法判断哪份更新，此处采用与之最相符的文档的日期。${dateList([kept, ...others], '；')}。`,
  byDate: (chosen, other, earlier) =>
    `${chosen.name.text} [${chosen.name.index}]：${chosen.date.text} [${chosen.date.index}]，${earlier ? '早于' : '晚于'}${other.name.text}的 ${other.date.text} [${other.date.index}]。`,
};

const phrasebookFor = (question: string): Phrasebook => (writtenInChinese(question) ? CHINESE : ENGLISH);

/** A quoted sentence without its closing stop: the citation goes before the stop. */
const withoutStop = (text: string): string => text.replace(/[\s.!?。！？]+$/u, '');

/** Evidence in the order to look for support: the hop's own citations first, then the rest. */
function evidenceFor(hop: SynthesisHop | undefined, evidence: readonly EvidenceItem[]): EvidenceItem[] {
  const own = (hop?.finding.citedChunkIds ?? []).flatMap((chunkId) =>
    evidence.filter((item) => item.chunk.chunkId === chunkId),
  );
  return [...own, ...evidence.filter((item) => !own.includes(item))];
}

const chunkStates = (chunk: Chunk__Output, phrase: string) => states(chunk.text, phrase) || states(chunk.title, phrase);

/** The evidence number of the first chunk that states every phrase, the hop's own citations first. */
function indexStating(
  phrases: readonly string[],
  hop: SynthesisHop | undefined,
  evidence: readonly EvidenceItem[],
): number | undefined {
  return evidenceFor(hop, evidence).find((item) => phrases.every((phrase) => chunkStates(item.chunk, phrase)))?.index;
}

/** The sentence of the evidence that states a hop's answer, with its number: the hop's own citations first. */
function sentenceStating(hop: SynthesisHop, evidence: readonly EvidenceItem[]): Cited | undefined {
  const answer = hop.finding.answer;
  if (!answer) return undefined;
  for (const item of evidenceFor(hop, evidence)) {
    const sentence = sentences(item.chunk.text).find((candidate) => states(candidate.text, answer));
    if (sentence) return { text: sentence.text, index: item.index };
  }
  return undefined;
}

/**
 * An option named as the evidence writes it where the question dropped its diacritics ("Renée
 * Oskarsdóttir" asked as "Renee Oskarsdottir"): the answer names the thing with the letters its documents give
 * it, the option's own documents first, a title before a text.
 */
function spelledAsFound(option: string, evidence: readonly EvidenceItem[], titles: TitleConventions): string {
  const own = evidence.filter((item) => isAbout(item.chunk, option, titles));
  const texts = [...own, ...evidence.filter((item) => !own.includes(item))].flatMap((item) => [
    item.chunk.title,
    item.chunk.text,
  ]);
  for (const text of texts) {
    const written = writtenAs(text, option);
    // Only letters the question dropped a mark from: the evidence's spacing and case are its own.
    if (written !== undefined && fold(written) === fold(option) && written.toLowerCase() !== option.toLowerCase())
      return written;
  }
  return option;
}

/** Which hop answered which option of a choice: the hop whose focus names it. */
function hopForOption(option: string, hops: readonly SynthesisHop[]): SynthesisHop | undefined {
  return (
    hops.find((hop) => questionAnchors(hop.focus).some((anchor) => sameEntity(anchor, option))) ??
    hops.find((hop) => hop.focus.toLowerCase().includes(option.toLowerCase()))
  );
}

/** The option whose evidence shares the most relation words with the question. */
function bestCovered(question: string, entries: readonly { option: string; hop: SynthesisHop | undefined }[]): string {
  const relation = expandRelations(relationTerms(question, questionAnchors(question)));
  let best = entries[0]?.option ?? '';
  let bestScore = -1;
  for (const entry of entries) {
    const cited = entry.hop?.finding.citedChunkIds.length ?? 0;
    const terms = contentTerms(`${entry.hop?.finding.answer ?? ''} ${entry.hop?.query ?? ''}`);
    const score = cited === 0 ? -1 : relation.filter((term) => containsStem(terms, term)).length;
    if (score > bestScore) {
      best = entry.option;
      bestScore = score;
    }
  }
  return best;
}

/** The answer sentence, every claim in it cited to a chunk that states it; or what no evidence states. */
/**
 * `sources`: the evidence numbers of the chunks a distributive question's items were answered
 * from. The hops looked up the items without the predicate: only their sentences from those
 * chunks (the date beside an item's sentence) add to the answer; the rest are about other things.
 */
type Opening = { sentence: string; sources?: ReadonlySet<number> } | { unstated: string } | { missing: string };

function chunkOfHop(hop: SynthesisHop | undefined, evidence: readonly EvidenceItem[]): Chunk__Output | undefined {
  return evidence.find((item) => item.chunk.chunkId === hop?.finding.citedChunkIds[0])?.chunk;
}

/** An option of a comparison with the date it is compared by, and the evidence number stating that date. */
interface DatedOption {
  option: string;
  hop: SynthesisHop | undefined;
  text: string;
  date: StatedDate;
  index: number;
  /** The date is the question's own ("2031年2月3日青川市签署…"), not read from a document. */
  asked: boolean;
  /** The option's role-holder whose date this is (the film's director), read from the holder's own document. */
  holder?: string;
}

/** A date one chunk states, with its evidence number and the date the document took effect ('' unknown). */
interface ChunkDate extends Cited {
  date: StatedDate;
  effectiveDate: string;
}

/**
 * An option's date: the one its question states when that names at least a month ("2031年2月3日
 * 青川市签署…"), else its hop's answer, else the first date its document gives (for a death,
 * the last year of its opening). A date without a year takes its document's first year. An
 * option whose hop found no chunk about it has none: a date the question states is no evidence
 * that the event is in the knowledge base, and the answer would cite nothing for it.
 */
function datedOption(
  entry: { option: string; hop: SynthesisHop | undefined },
  input: SynthesisInput,
  wantsDeath: boolean,
): DatedOption | undefined {
  const chunk = chunkOfHop(entry.hop, input.evidence);
  if (!chunk) return undefined;
  const chunkIndex = input.evidence.find((item) => item.chunk === chunk)?.index;
  const asked = parseDate(entry.option);
  // A date its document gives without a year ("6月24日") is in the year of the document's own
  // dates, else the year the question names for the event, else any year the document mentions.
  const contextYear = datedYearIn(chunk.text) ?? asked?.year ?? firstDateIn(chunk.text)?.date.year;
  const answer = entry.hop && !entry.hop.finding.unknown ? entry.hop.finding.answer : '';
  const fromAnswer = answer ? parseDate(answer, contextYear) : undefined;
  const deathYear = wantsDeath ? yearOf(chunk, true) : undefined;
  const fromChunk =
    deathYear !== undefined
      ? { text: String(deathYear), date: { year: deathYear } }
      : firstDateIn(sentences(chunk.text)[0]?.text ?? chunk.text);
  const picked =
    asked?.month !== undefined
      ? { text: entry.option, date: asked }
      : fromAnswer
        ? { text: answer, date: fromAnswer }
        : fromChunk;
  if (!picked) return undefined;
  const index = indexStating([picked.text], entry.hop, input.evidence) ?? chunkIndex;
  return index === undefined ? undefined : { ...entry, ...picked, index, asked: asked?.month !== undefined };
}

/** An option's role-holder: what the option's hop found (the film's director), if it found one. */
const holderOf = (entry: { hop: SynthesisHop | undefined }): string =>
  entry.hop && !entry.hop.finding.unknown ? entry.hop.finding.answer : '';

/**
 * An option's date through its role-holder: the birth (or, for a death, the last year) the
 * opening of the holder's own document gives. Undefined where no document in the evidence is
 * about the holder: the option's own document dates the option, not its director.
 */
function holderDate(
  entry: { option: string; hop: SynthesisHop | undefined },
  input: SynthesisInput,
  wantsDeath: boolean,
): DatedOption | undefined {
  const holder = holderOf(entry);
  const titles = titleConventions(input.switchedOff);
  const item = holder ? input.evidence.find((candidate) => isAbout(candidate.chunk, holder, titles)) : undefined;
  if (!item) return undefined;
  const deathYear = wantsDeath ? yearOf(item.chunk, true) : undefined;
  const stated =
    deathYear !== undefined
      ? { text: String(deathYear), date: { year: deathYear } }
      : wantsDeath
        ? undefined
        : firstDateIn(openingOf(item.chunk).text);
  return stated && { ...entry, ...stated, index: item.index, asked: false, holder };
}

/** A chunk's opening sentence, where news states its date and what it reports. */
function openingOf(chunk: Chunk__Output): Chunk__Output {
  return { ...chunk, text: sentences(chunk.text)[0]?.text ?? chunk.text };
}

/**
 * The date each chunk a hop cites gives the event in its opening sentence, for each whose
 * opening covers the event at least as well as the chunk the option's date came from: a
 * follow-up report opens with its own day and its own news, and is no rival date for the event.
 */
function citedDates(entry: DatedOption, evidence: readonly EvidenceItem[]): ChunkDate[] {
  const source = evidence.find((item) => item.index === entry.index)?.chunk;
  const bar = source ? weightedCoverage(entry.option, openingOf(source)) : 1;
  return (entry.hop?.finding.citedChunkIds ?? []).flatMap((chunkId) => {
    const item = evidence.find((candidate) => candidate.chunk.chunkId === chunkId);
    if (!item || item.chunk === source) return [];
    const opening = openingOf(item.chunk);
    const stated = weightedCoverage(entry.option, opening) >= bar ? firstDateIn(opening.text) : undefined;
    return stated ? [{ ...stated, index: item.index, effectiveDate: item.chunk.effectiveDate }] : [];
  });
}

/** The one claim whose document took effect last, when every claim's document has a date; else none. */
function newestClaim(claims: readonly ChunkDate[]): ChunkDate | undefined {
  if (claims.some((claim) => claim.effectiveDate === '')) return undefined;
  const [newest, next] = [...claims].sort((a, b) => b.effectiveDate.localeCompare(a.effectiveDate));
  return newest && next && newest.effectiveDate !== next.effectiveDate ? newest : undefined;
}

/**
 * An option read from its documents, checked against the other chunks its hop cites about the
 * same event: when they give it another date (another day for "which first", another month for
 * "the same month"), the documents conflict. The newest document wins, and the answer says so;
 * with no document known to be newer, the date of the document that matches the event best
 * stands, and the answer says the documents disagree. (Abstaining there instead was measured on
 * the ChronoQA tune half: news reports the same kind of event on many days, and it cost a
 * tenth of the answerable questions for a few more abstentions where a document was removed.)
 */
function settleConflict(entry: DatedOption, input: SynthesisInput, period: Period | undefined, words: Phrasebook) {
  // A role-holder's document is about the holder: the option's other chunks date the option, no rival.
  if (entry.asked || entry.holder !== undefined) return { entry };
  const differs = (date: StatedDate) =>
    period ? inSamePeriod(date, entry.date, period) === false : compareDates(date, entry.date) !== 0;
  const rivals = citedDates(entry, input.evidence).filter((claim) => differs(claim.date));
  if (rivals.length === 0) return { entry };
  const own: ChunkDate = {
    text: entry.text,
    index: entry.index,
    date: entry.date,
    effectiveDate: input.evidence.find((item) => item.index === entry.index)?.chunk.effectiveDate ?? '',
  };
  const claims = [own, ...rivals];
  const newest = newestClaim(claims);
  if (!newest) return { entry, note: words.unsettled(entry.option, own, rivals) };
  const others = claims.filter((claim) => claim !== newest);
  return {
    entry: { ...entry, text: newest.text, date: newest.date, index: newest.index },
    note: words.newest(entry.option, newest, others),
  };
}

/**
 * Whether two of the options fell in different months whatever their years: a date with no year
 * its document states ("1月7日") still tells "the same month" (or day) apart from "2024年4月3日".
 * An option without a dated hop answer counts by the date it was found with, if any.
 */
function monthsDiffer(
  entries: readonly { option: string; hop: SynthesisHop | undefined }[],
  found: readonly (DatedOption | undefined)[],
): boolean {
  const months = entries.flatMap((entry, index) => {
    const dated = found[index];
    if (dated) return dated.date.month === undefined ? [] : [dated.date.month];
    const answer = entry.hop && !entry.hop.finding.unknown ? entry.hop.finding.answer : '';
    const month = datesIn(answer)[0]?.month;
    return month === undefined ? [] : [month];
  });
  return new Set(months).size > 1;
}

/** The options a which-first question picks among dated options: the first (or last), ties together. */
function picked(dated: readonly DatedOption[], wanted: 'earlier' | 'later'): string {
  const ordered = [...dated].sort((a, b) => compareDates(a.date, b.date));
  const chosen = (wanted === 'earlier' ? ordered[0] : ordered.at(-1)) as DatedOption;
  return dated
    .filter((entry) => compareDates(entry.date, chosen.date) === 0)
    .map((entry) => entry.option)
    .join('\n');
}

/**
 * The options of a which-first question whose documents state their date without any year
 * ("6月15日" in a summary that names no year anywhere), placed in the years the other options'
 * documents give: events a question sets side by side are mostly reported in the same years.
 * Only when the option picked is the same in each of those years (or, with every date yearless,
 * when they are read in one year); the answer then says which dates had no year. Undefined when
 * an undated option has no yearless date either, or the years would change the answer.
 */
function placeYearless(
  entries: readonly { option: string; hop: SynthesisHop | undefined }[],
  found: readonly (DatedOption | undefined)[],
  input: SynthesisInput,
  wanted: 'earlier' | 'later',
): { found: DatedOption[]; yearless: DatedOption[]; years: number[] } | undefined {
  const yearless: DatedOption[] = [];
  for (const [position, entry] of entries.entries()) {
    if (found[position]) continue;
    const chunk = chunkOfHop(entry.hop, input.evidence);
    // A document that names a year anywhere was read in it already; only one that names none.
    if (!chunk || datesIn(chunk.text).some((date) => date.year !== undefined)) return undefined;
    const answer = entry.hop && !entry.hop.finding.unknown ? yearlessDateIn(entry.hop.finding.answer) : undefined;
    const date = answer ?? yearlessDateIn(sentences(chunk.text)[0]?.text ?? chunk.text);
    const index = date && indexStating([date.text], entry.hop, input.evidence);
    if (!date || index === undefined) return undefined;
    const { month, day } = date;
    yearless.push({
      ...entry,
      text: date.text,
      date: { year: 0, month, ...(day === undefined ? {} : { day }) },
      index,
      asked: false,
    });
  }
  const known = found.filter((entry): entry is DatedOption => entry !== undefined);
  const years = [...new Set(known.map((entry) => entry.date.year))].sort((a, b) => a - b);
  const readings = (years.length > 0 ? years : [0]).map((year) => {
    const inYear = yearless.map((entry) => ({ ...entry, date: { ...entry.date, year } }));
    return entries.map(
      (entry) =>
        known.find((dated) => dated.option === entry.option) ??
        (inYear.find((dated) => dated.option === entry.option) as DatedOption),
    );
  });
  const choices = new Set(readings.map((reading) => picked(reading, wanted)));
  if (choices.size !== 1) return undefined;
  return { found: readings[0] as DatedOption[], yearless, years };
}

/**
 * A comparison decided by dates: which option came first (or last), or whether they fell in the
 * same day, month or year. Every option needs a date: without one for some option the answer
 * abstains and names them; with dates too imprecise to decide (or all on one day) it abstains
 * too. Otherwise it names the chosen option (or the judgement) citing the chunks that state the
 * dates it rests on. Undefined for a question that compares nothing by date.
 */
function dateDecision(
  input: SynthesisInput,
  entries: readonly { option: string; hop: SynthesisHop | undefined }[],
  words: Phrasebook,
): Opening | undefined {
  const wanted = dateComparison(input.question);
  const period = samePeriod(input.question);
  if (!wanted && !period) return undefined;
  const wantsDeath = /\b(died|death|dead)\b|去世|逝世/i.test(input.question);
  // "Which film has the director who is older, X or Y?" compares the directors' births, not the films' dates.
  const byHolders = isOn(input.switchedOff, 'roleHolderDates') && determinedRoleNoun(input.question) !== undefined;
  let found = entries.map((entry) =>
    byHolders ? holderDate(entry, input, wantsDeath) : datedOption(entry, input, wantsDeath),
  );
  const notes: string[] = [];
  // Where a role-holder is known but undated, the holder's document is what is missing.
  const undated = entries
    .filter((_, index) => found[index] === undefined)
    .map((entry) => (byHolders && holderOf(entry)) || entry.option);
  const placed =
    undated.length > 0 && wanted && !byHolders && isOn(input.switchedOff, 'yearlessDates')
      ? placeYearless(entries, found, input, wanted)
      : undefined;
  if (placed) {
    found = placed.found;
    notes.push(
      words.yearless(
        placed.yearless.map((entry) => ({ text: entry.text, index: entry.index })),
        placed.years,
      ),
    );
  } else if (undated.length > 0) {
    if (period && period !== 'year' && monthsDiffer(entries, found)) return { sentence: `${words.no}${words.stop}` };
    return { missing: words.undatedEvents(undated) };
  }
  const dated: DatedOption[] = [];
  for (const entry of found as DatedOption[]) {
    // A date placed in an assumed year has no year a rival report could contradict.
    const settled = placed?.yearless.some((yearless) => yearless.option === entry.option)
      ? { entry }
      : settleConflict(entry, input, period, words);
    dated.push(settled.entry);
    if (settled.note) notes.push(settled.note);
  }
  const decided = decideByDates(input, dated, { wanted, period }, words);
  return 'sentence' in decided ? { sentence: [decided.sentence, ...notes].join(words.space) } : decided;
}

/** The judgement or the option the dates decide, every option dated and no conflict left. */
function decideByDates(
  input: SynthesisInput,
  dated: readonly DatedOption[],
  { wanted, period }: { wanted: 'earlier' | 'later' | undefined; period: Period | undefined },
  words: Phrasebook,
): Opening {
  if (period) {
    // The judgement is no phrase a chunk states: it stands uncited, and the sentences after it
    // quote each event's date from the chunk that states it.
    const [first, ...rest] = dated;
    const same = rest.map((entry) => inSamePeriod(first?.date as StatedDate, entry.date, period));
    if (same.includes(false)) return { sentence: `${words.no}${words.stop}` };
    return same.includes(undefined) ? { missing: words.undated } : { sentence: `${words.yes}${words.stop}` };
  }
  const judged = isOn(input.switchedOff, 'orderJudgements') ? orderJudgement(input.question) : undefined;
  if (judged && wanted) {
    // "A比B早吗": the judgement stands uncited, as a same-month one does; the sentences after it
    // quote each event's date from the chunk that states it.
    const [first, second] = dated;
    const order = first && second ? compareDates(first.date, second.date) : 0;
    if (order === 0) return { missing: words.tied };
    const firstIsEarlier = order < 0;
    return { sentence: `${firstIsEarlier === (wanted === 'earlier') ? words.yes : words.no}${words.stop}` };
  }
  const ordered = [...dated].sort((a, b) => compareDates(a.date, b.date));
  const chosen = wanted === 'earlier' ? ordered[0] : ordered.at(-1);
  const runnerUp = wanted === 'earlier' ? ordered[1] : ordered.at(-2);
  if (!chosen || !runnerUp) return { missing: words.undated };
  // Options on the same first (or last) date are all the answer: parties that shared one predicate
  // ("A和B访问中国") tie by construction. Only when every option ties is nothing decided.
  const tied = dated.filter((entry) => compareDates(entry.date, chosen.date) === 0);
  if (tied.length === dated.length) return { missing: words.tied };
  if (tied.length > 1) {
    return {
      sentence: `${tied.map((entry) => `${entry.option} [${entry.index}]`).join(words.listSeparator)}${words.stop}`,
    };
  }
  // Two options whose names and dates their chunks state: the sentence that shows the comparison.
  if (dated.length === 2) {
    const claim = (entry: DatedOption): DatedClaim | undefined => {
      const nameIndex = indexStating([entry.option], entry.hop, input.evidence);
      return nameIndex === undefined
        ? undefined
        : { name: { text: entry.option, index: nameIndex }, date: { text: entry.text, index: entry.index } };
    };
    const chosenClaim = claim(chosen);
    const otherClaim = claim(runnerUp);
    if (chosenClaim && otherClaim) return { sentence: words.byDate(chosenClaim, otherClaim, wanted === 'earlier') };
  }
  // Otherwise the option, cited to its date's chunk; the hops' sentences after it quote each date.
  return { sentence: `${chosen.option} [${chosen.index}]${words.stop}` };
}

/** The sentence of a chunk that best covers an event, with the evidence number of the chunk. */
function sentenceAbout(event: string, item: EvidenceItem): Cited {
  const best = sentences(item.chunk.text)
    .map((sentence) => ({
      text: withoutStop(sentence.text),
      coverage: weightedCoverage(event, { ...item.chunk, title: '', text: sentence.text }),
    }))
    .sort((a, b) => b.coverage - a.coverage)[0];
  return { text: best?.text ?? item.chunk.text, index: item.index };
}

/**
 * A distributive question ("A和B分别在几月几日开通地铁？", "When were A and B founded,
 * respectively?") answered item by item: each item's answer is the sentence of a chunk about the
 * item with the predicate they share, the item's own hop's citations first. The hops split the
 * question into items that lost the predicate, so a hop's answer word is no answer here; and a
 * chunk that names the item without the predicate is about something else, as is one that
 * shares the predicate and the setting without the item. An item no chunk is about is named in
 * the abstention.
 */
function respectiveAnswer(input: SynthesisInput, items: readonly RespectiveItem[], words: Phrasebook): Opening {
  // A predicate that names only a kind of event asks what happened to the item in the setting.
  const kindOnly = isOn(input.switchedOff, 'eventKinds');
  const sources = items.map(({ item, event, scene }) =>
    evidenceFor(hopForOption(item, input.hops), input.evidence).find(
      (candidate) =>
        isAboutEvent(item, candidate.chunk, input.switchedOff) &&
        isAboutEvent(kindOnly && scene !== undefined ? scene : event, candidate.chunk, input.switchedOff),
    ),
  );
  const missing = items.filter((_, index) => sources[index] === undefined).map(({ item }) => item);
  if (missing.length > 0) return { missing: words.unaboutItems(missing) };
  const lines = new Set(
    items.map(({ event }, index) => {
      const cited = sentenceAbout(event, sources[index] as EvidenceItem);
      return `${cited.text} [${cited.index}]${words.stop}`;
    }),
  );
  return {
    sentence: [...lines].join(words.space),
    sources: new Set(sources.map((source) => (source as EvidenceItem).index)),
  };
}

/**
 * The answers of a compound question's two parts, each cited to a chunk that states it: "Daniel
 * Okafor [1]; Reliability [2]." A part whose answer is not of the kind it asks is what is missing.
 */
function compoundAnswer(input: SynthesisInput, compound: CompoundQuestion, words: Phrasebook): Opening | undefined {
  const first = input.hops.find((hop) => hop.focus === compound.first && !hop.finding.unknown);
  const second = input.hops.at(-1);
  if (!first || !second || second === first || second.finding.unknown) return undefined;
  const chunks = input.evidence.map((item) => item.chunk);
  const parts: [string, SynthesisHop][] = [
    [compound.first, first],
    [second.focus, second],
  ];
  const cited: string[] = [];
  for (const [part, hop] of parts) {
    const { answer } = hop.finding;
    if (isOn(input.switchedOff, 'answerFit') && !fitsQuestion(part, answer, chunks))
      return { missing: words.unfit(answer) };
    const index = indexStating([answer], hop, input.evidence);
    if (index === undefined) return { unstated: answer };
    cited.push(`${answer} [${index}]`);
  }
  return { sentence: `${cited.join('; ')}${words.stop}` };
}

function opening(input: SynthesisInput, words: Phrasebook): Opening | undefined {
  const { question, hops, evidence } = input;
  const compound = isOn(input.switchedOff, 'compoundQuestions') ? compoundParts(question, '') : undefined;
  if (compound) return compoundAnswer(input, compound, words);
  const respective = dateComparison(question) || samePeriod(question) ? [] : respectiveItems(question);
  if (respective.length > 0) return respectiveAnswer(input, respective, words);
  const choices = comparedOptions(question);
  if (choices.length >= 2) {
    const entries = choices.map((option) => ({
      option: spelledAsFound(option, evidence, titleConventions(input.switchedOff)),
      hop: hopForOption(option, hops),
    }));
    const unfound = unfoundOptions(entries, evidence, titleConventions(input.switchedOff));
    if (unfound.length > 0) return { missing: words.unfound(unfound) };
    const byDate = dateDecision(input, entries, words);
    if (byDate) return byDate;
    const stating = isOn(input.switchedOff, 'statedChoice')
      ? optionStatingMost(
          question,
          entries.map((entry) => entry.option),
          evidence,
          titleConventions(input.switchedOff),
        )
      : undefined;
    if (stating) {
      const { text, index } = stating.support;
      return {
        sentence: `${stating.option} [${index}]${words.stop}${words.space}${withoutStop(text)} [${index}]${words.stop}`,
        sources: new Set(),
      };
    }
    const chosen = bestCovered(question, entries);
    const index = indexStating([chosen], entries.find((entry) => entry.option === chosen)?.hop, evidence);
    return index === undefined ? { unstated: chosen } : { sentence: `${chosen} [${index}]${words.stop}` };
  }
  const judged = isOn(input.switchedOff, 'jointJudgement')
    ? judgeJointly(question, evidence, titleConventions(input.switchedOff))
    : undefined;
  if (judged) {
    if ('missing' in judged) return { missing: words.unfound(judged.missing) };
    if ('unstated' in judged) return judged;
    // The verdict is no phrase a chunk states: it stands on the sentences of the things' own
    // documents quoted after it; the hops' answers were read for no particular predicate.
    const quoted = new Set(
      judged.support.map((support) => `${withoutStop(support.text)} [${support.index}]${words.stop}`),
    );
    return {
      sentence: [`${words[judged.verdict]} [${judged.support[0]?.index ?? 1}]${words.stop}`, ...quoted].join(
        words.space,
      ),
      sources: new Set(),
    };
  }
  const focused = hops.filter((hop) => !hop.finding.unknown);
  if (/^\s*(is|are|was|were|do|does|did)\b/i.test(question) && focused.length >= 2) {
    // "yes" or "no" is no phrase a chunk states; it rests on the hops' answers, each cited below.
    const [first, ...rest] = focused;
    const same = rest.every((hop) => sameEntity(hop.finding.answer, first?.finding.answer ?? ''));
    const index = evidenceFor(first, evidence)[0]?.index;
    return index === undefined ? undefined : { sentence: `${same ? 'yes' : 'no'} [${index}]${words.stop}` };
  }
  const last = focused.at(-1);
  if (!last?.finding.answer) return undefined;
  const chunks = evidence.map((item) => item.chunk);
  if (isOn(input.switchedOff, 'answerFit') && !fitsQuestion(question, last.finding.answer, chunks))
    return { missing: words.unfit(last.finding.answer) };
  const index = indexStating([last.finding.answer], last, evidence);
  return index === undefined
    ? { unstated: last.finding.answer }
    : { sentence: `${last.finding.answer} [${index}]${words.stop}` };
}

/** Each found hop's sentence stating its answer, each sentence once; only from the `from` chunks where given. */
function chainSentences(input: SynthesisInput, words: Phrasebook, from?: ReadonlySet<number>): string[] {
  const lines: string[] = [];
  const seen = new Set<string>();
  for (const hop of input.hops) {
    if (hop.finding.unknown) continue;
    const stated = sentenceStating(hop, input.evidence);
    if (!stated || (from && !from.has(stated.index))) continue;
    const text = withoutStop(stated.text);
    const key = contentTerms(text).join(' ');
    if (seen.has(key)) continue;
    seen.add(key);
    lines.push(`${text} [${stated.index}]${words.stop}`);
  }
  return lines;
}

function abstention(input: SynthesisInput, words: Phrasebook, missing: string): string[] {
  const found = chainSentences(input, words);
  return [
    words.cannotAnswer,
    found.length > 0 ? `${words.found}${found.join(words.space)}` : words.nothingFound,
    `${words.notFound}${missing || words.remaining}${words.stop}`,
  ];
}

/**
 * What a broken chain did not find: the documents about the entities it looked for, else its
 * last search. Where each entity's own (titled) document is among the evidence, that document
 * was found and what is missing is what the question asks of it.
 */
function brokenAt(input: SynthesisInput, words: Phrasebook): string {
  const entities = unfoundEntities(input.question, input.hops);
  if (entities.length === 0) return input.missing;
  const titles = input.evidence.map((item) => item.chunk.title).filter((title) => title !== '');
  const ownFound = entities.every((entity) => titles.some((title) => sameEntity(title, entity)));
  return ownFound ? words.unaboutItems(entities) : words.unfound(entities);
}

/** Whether the offline synthesis of this input abstains: an incomplete chain, or no answer its evidence states. */
export function offlineAbstains(input: SynthesisInput): boolean {
  const first = input.complete ? opening(input, phrasebookFor(input.question)) : undefined;
  return !(first && 'sentence' in first);
}

export async function* synthesizeOffline(input: SynthesisInput): AsyncGenerator<string> {
  const words = phrasebookFor(input.question);
  const first = input.complete ? opening(input, words) : undefined;
  const lines =
    first && 'sentence' in first
      ? [first.sentence, ...chainSentences(input, words, first.sources)]
      : abstention(
          input,
          words,
          first && 'unstated' in first
            ? words.unstated(first.unstated)
            : first && 'missing' in first
              ? first.missing
              : brokenAt(input, words),
        );
  for (const [position, line] of lines.entries()) yield position === 0 ? line : `${words.space}${line}`;
}
