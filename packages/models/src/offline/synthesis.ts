import type { Chunk__Output } from '@hopline/contracts';
import type { EvidenceItem, SynthesisHop, SynthesisInput } from '../reasoner/reasoner.js';
import { pickByYear } from './answers.js';
import { choiceOptions, questionAnchors, relationTerms, sameEntity } from './question.js';
import { expandRelations } from './relations.js';
import { containsStem, contentTerms, sentences } from './text.js';

/**
 * Extractive synthesis: the answer first, then each hop's supporting sentence quoted from the
 * evidence, every sentence ending in the [n] of the chunk it comes from. A broken chain gets an
 * abstention that says what was found (cited) and what was not.
 */

interface Conclusion {
  answer: string;
  /** The hop whose evidence supports the answer. */
  hop: SynthesisHop | undefined;
}

function firstCitedIndex(hop: SynthesisHop | undefined, evidence: readonly EvidenceItem[]): number | undefined {
  if (!hop) return undefined;
  for (const chunkId of hop.finding.citedChunkIds) {
    const item = evidence.find((entry) => entry.chunk.chunkId === chunkId);
    if (item) return item.index;
  }
  return undefined;
}

/** The sentence of a chunk that states the hop's answer, or shares most words with its query. */
function supportingSentence(chunk: Chunk__Output, hop: SynthesisHop): string {
  const all = sentences(chunk.text);
  const answerTerms = contentTerms(hop.finding.answer);
  const stating = answerTerms.length > 0 ? all.find((sentence) => answerTerms.every((term) => containsStem(contentTerms(sentence.text), term))) : undefined;
  if (stating) return stating.text;
  const queryTerms = contentTerms(hop.query);
  const ranked = [...all].sort(
    (a, b) => queryTerms.filter((t) => containsStem(contentTerms(b.text), t)).length - queryTerms.filter((t) => containsStem(contentTerms(a.text), t)).length,
  );
  return ranked[0]?.text ?? chunk.text.slice(0, 240);
}

/** Which hop answered which option of a choice: the hop whose focus names it. */
function hopForOption(option: string, hops: readonly SynthesisHop[]): SynthesisHop | undefined {
  return hops.find((hop) => questionAnchors(hop.focus).some((anchor) => sameEntity(anchor, option))) ?? hops.find((hop) => hop.focus.toLowerCase().includes(option.toLowerCase()));
}

function conclude(input: SynthesisInput): Conclusion {
  const { question, hops, evidence } = input;
  const chunkOf = (hop: SynthesisHop | undefined) => evidence.find((item) => item.chunk.chunkId === hop?.finding.citedChunkIds[0])?.chunk;
  const options = choiceOptions(question);
  if (options.length === 2) {
    const entries = options.map((option) => ({ option, hop: hopForOption(option, hops) }));
    const byYear = pickByYear(
      question,
      entries.map((entry) => ({ option: entry.option, chunk: chunkOf(entry.hop) })),
    );
    const chosen = byYear ?? bestCovered(question, entries);
    return { answer: chosen, hop: entries.find((entry) => entry.option === chosen)?.hop };
  }
  const focused = hops.filter((hop) => !hop.finding.unknown);
  if (/^\s*(is|are|was|were|do|does|did)\b/i.test(question) && focused.length >= 2) {
    const [first, ...rest] = focused;
    const same = rest.every((hop) => sameEntity(hop.finding.answer, first?.finding.answer ?? ''));
    return { answer: same ? 'yes' : 'no', hop: first };
  }
  const last = focused.at(-1);
  return { answer: last?.finding.answer ?? '', hop: last };
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

function chainSentences(input: SynthesisInput, onlyFound: boolean): string[] {
  const lines: string[] = [];
  for (const hop of input.hops) {
    if (onlyFound && hop.finding.unknown) continue;
    const index = firstCitedIndex(hop, input.evidence);
    const item = input.evidence.find((entry) => entry.index === index);
    if (index === undefined || !item) continue;
    lines.push(`${supportingSentence(item.chunk, hop).replace(/[\s.!?。]+$/u, '')} [${index}].`);
  }
  return lines;
}

function abstention(input: SynthesisInput): string[] {
  const found = chainSentences(input, true);
  const lines = ['I cannot answer this from the knowledge base: the chain of evidence is incomplete.'];
  if (found.length > 0) lines.push(`What was found: ${found.join(' ')}`);
  else lines.push('No retrieved document supports any step of the chain.');
  lines.push(`What was not found: ${input.missing || 'the evidence for the remaining part of the question'}.`);
  return lines;
}

export async function* synthesizeOffline(input: SynthesisInput): AsyncGenerator<string> {
  const conclusion = input.complete ? conclude(input) : undefined;
  const index = firstCitedIndex(conclusion?.hop, input.evidence);
  const lines =
    conclusion?.answer && index !== undefined
      ? [`${conclusion.answer} [${index}].`, ...chainSentences(input, true)]
      : abstention(input);
  for (const [position, line] of lines.entries()) yield position === 0 ? line : ` ${line}`;
}
