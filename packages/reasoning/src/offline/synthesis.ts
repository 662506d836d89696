import type { Chunk__Output } from '@hopline/contracts';
import { containsStem, contentTerms, hasHan } from '@hopline/text';
import type { EvidenceItem, SynthesisHop, SynthesisInput } from '../reasoner/reasoner.js';
import { pickByYear, yearIn, yearOf } from './answers.js';
import {
  choiceOptions,
  chineseComparisonOptions,
  dateComparison,
  questionAnchors,
  relationTerms,
  sameEntity,
} from './question.js';
import { expandRelations } from './relations.js';
import { sentences, states } from './text.js';

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
  cannotAnswer: string;
  found: string;
  notFound: string;
  nothingFound: string;
  remaining: string;
  unstated: (answer: string) => string;
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

const ENGLISH: Phrasebook = {
  stop: '.',
  space: ' ',
  cannotAnswer: 'I cannot answer this from the knowledge base: the chain of evidence is incomplete.',
  found: 'What was found: ',
  notFound: 'What was not found: ',
  nothingFound: 'No retrieved document supports any step of the chain.',
  remaining: 'the evidence for the remaining part of the question',
  unstated: (answer) => `a document that states "${answer}"`,
  byDate: (chosen, other, earlier) =>
    `${chosen.name.text} [${chosen.name.index}]: ${chosen.date.text} [${chosen.date.index}], ${earlier ? 'before' : 'after'} ${other.name.text}, ${other.date.text} [${other.date.index}].`,
};

const CHINESE: Phrasebook = {
  stop: '。',
  space: '',
  cannotAnswer: '无法根据知识库回答：证据链不完整。',
  found: '已找到：',
  notFound: '未找到：',
  nothingFound: '没有检索到支持任何一步推理的文档。',
  remaining: '问题其余部分的证据',
  unstated: (answer) => `陈述“${answer}”的文档`,
  byDate: (chosen, other, earlier) =>
    `${chosen.name.text} [${chosen.name.index}]：${chosen.date.text} [${chosen.date.index}]，${earlier ? '早于' : '晚于'}${other.name.text}的 ${other.date.text} [${other.date.index}]。`,
};

const phrasebookFor = (question: string): Phrasebook => (hasHan(question) ? CHINESE : ENGLISH);

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
type Opening = { sentence: string } | { unstated: string };

function chunkOfHop(hop: SynthesisHop | undefined, evidence: readonly EvidenceItem[]): Chunk__Output | undefined {
  return evidence.find((item) => item.chunk.chunkId === hop?.finding.citedChunkIds[0])?.chunk;
}

/**
 * A choice decided by dates: each option's date is its hop's answer (or, failing that, the first
 * year its document gives), and the sentence cites the chunk stating each option's date.
 */
function dateChoice(
  input: SynthesisInput,
  entries: readonly { option: string; hop: SynthesisHop | undefined }[],
  words: Phrasebook,
): Opening | undefined {
  const wanted = dateComparison(input.question);
  if (!wanted) return undefined;
  const wantsDeath = /\b(died|death|dead)\b|去世|逝世/i.test(input.question);
  const dated = entries.map((entry) => {
    const answerYear = entry.hop && !entry.hop.finding.unknown ? yearIn(entry.hop.finding.answer) : undefined;
    const chunk = chunkOfHop(entry.hop, input.evidence);
    const year = answerYear ?? (chunk ? yearOf(chunk, wantsDeath) : undefined);
    const date = answerYear !== undefined && entry.hop ? entry.hop.finding.answer : String(year ?? '');
    return { option: entry.option, year, date, hop: entry.hop };
  });
  const picked = pickByYear(input.question, dated);
  if (!picked) return undefined;
  const chosen = dated.find((entry) => entry.option === picked.chosen.option);
  const other = dated.find((entry) => entry.option === picked.other.option);
  if (!chosen || !other) return undefined;
  // Each option's date is cited where it is stated with the option's name, else where it is stated at all.
  const claim = (entry: (typeof dated)[number]): DatedClaim | undefined => {
    const both = indexStating([entry.option, entry.date], entry.hop, input.evidence);
    const nameIndex = both ?? indexStating([entry.option], entry.hop, input.evidence);
    const dateIndex = both ?? indexStating([entry.date], entry.hop, input.evidence);
    return nameIndex === undefined || dateIndex === undefined
      ? undefined
      : { name: { text: entry.option, index: nameIndex }, date: { text: entry.date, index: dateIndex } };
  };
  const chosenClaim = claim(chosen);
  const otherClaim = claim(other);
  if (!chosenClaim) return { unstated: chosen.option };
  if (!otherClaim) return { unstated: other.option };
  return { sentence: words.byDate(chosenClaim, otherClaim, wanted === 'earlier') };
}

function opening(input: SynthesisInput, words: Phrasebook): Opening | undefined {
  const { question, hops, evidence } = input;
  const options = choiceOptions(question);
  const choices = options.length === 2 ? options : chineseComparisonOptions(question);
  if (choices.length === 2) {
    const entries = choices.map((option) => ({ option, hop: hopForOption(option, hops) }));
    const byDate = dateChoice(input, entries, words);
    if (byDate) return byDate;
    const chosen = bestCovered(question, entries);
    const index = indexStating([chosen], entries.find((entry) => entry.option === chosen)?.hop, evidence);
    return index === undefined ? { unstated: chosen } : { sentence: `${chosen} [${index}]${words.stop}` };
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
  const index = indexStating([last.finding.answer], last, evidence);
  return index === undefined
    ? { unstated: last.finding.answer }
    : { sentence: `${last.finding.answer} [${index}]${words.stop}` };
}

/** Each found hop's sentence stating its answer, each sentence once. */
function chainSentences(input: SynthesisInput, words: Phrasebook): string[] {
  const lines: string[] = [];
  const seen = new Set<string>();
  for (const hop of input.hops) {
    if (hop.finding.unknown) continue;
    const stated = sentenceStating(hop, input.evidence);
    if (!stated) continue;
    const text = stated.text.replace(/[\s.!?。！？]+$/u, '');
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

export async function* synthesizeOffline(input: SynthesisInput): AsyncGenerator<string> {
  const words = phrasebookFor(input.question);
  const first = input.complete ? opening(input, words) : undefined;
  const lines =
    first && 'sentence' in first
      ? [first.sentence, ...chainSentences(input, words)]
      : abstention(input, words, first && 'unstated' in first ? words.unstated(first.unstated) : input.missing);
  for (const [position, line] of lines.entries()) yield position === 0 ? line : `${words.space}${line}`;
}
