import type { Chunk__Output } from '@hopline/contracts';
import { containsStem, contentTerms } from '@hopline/text';
import type { AnswerType } from './question.js';
import { dateComparison } from './question.js';
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
const FULL_DATE = new RegExp(
  `\\b(?:\\d{1,2}\\s+${MONTH}\\s+\\d{3,4}|${MONTH}\\s+\\d{1,2},?\\s+\\d{3,4}|${MONTH}\\s+\\d{3,4})\\b`,
  'g',
);
const YEAR = /\b(1[0-9]{3}|20[0-9]{2})s?\b/g;
const NUMBER =
  /\b\d[\d,.]*(?:\s+(?:million|billion|thousand|hundred))?\b|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|hundred)\b/gi;

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

function firstMatch(pattern: RegExp, text: string): string | undefined {
  pattern.lastIndex = 0;
  return pattern.exec(text)?.[0];
}

/** A date or number answer from the sentence that best matches the question's relation words. */
export function readTypedAnswer(
  type: AnswerType,
  cited: readonly Chunk__Output[],
  relationTerms: readonly string[],
): ReadAnswer | undefined {
  if (type !== 'date' && type !== 'number') return undefined;
  for (const sentence of rankedSentences(cited, relationTerms)) {
    const found =
      type === 'date'
        ? (firstMatch(FULL_DATE, sentence.text) ?? firstMatch(YEAR, sentence.text))
        : firstMatch(NUMBER, sentence.text);
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
export function yearIn(answer: string): number | undefined {
  YEAR.lastIndex = 0;
  const match = YEAR.exec(answer);
  return match ? Number(match[1]) : undefined;
}

export interface DatedOption {
  option: string;
  year: number | undefined;
}

/**
 * Which option a date comparison picks, and the one it beats: "which came out first" wants the
 * earlier year, "died later" the later. Undefined when the question compares something else,
 * fewer than two options have a year, or the years tie.
 */
export function pickByYear(
  question: string,
  options: readonly DatedOption[],
): { chosen: DatedOption; other: DatedOption } | undefined {
  const wanted = dateComparison(question);
  if (!wanted) return undefined;
  const dated = options
    .filter((entry) => entry.year !== undefined)
    .sort((a, b) => (a.year as number) - (b.year as number));
  if (dated.length < 2) return undefined;
  const chosen = wanted === 'earlier' ? dated[0] : dated.at(-1);
  const other = wanted === 'earlier' ? dated.at(-1) : dated[0];
  return chosen && other && chosen.year !== other.year ? { chosen, other } : undefined;
}
