import type { Chunk__Output } from '@hopline/contracts';
import type { AnswerType } from './question.js';
import { expandRelations } from './relations.js';
import { containsStem, contentTerms, sentences } from './text.js';

/**
 * The typed answers the offline reasoner can read off evidence: a date, a number, or a
 * comparison between the options of a choice. Each comes with the chunk it was read from.
 */

export interface ReadAnswer {
  answer: string;
  chunkId: string;
}

const MONTH = '(?:January|February|March|April|May|June|July|August|September|October|November|December)';
const FULL_DATE = new RegExp(`\\b(?:\\d{1,2}\\s+${MONTH}\\s+\\d{3,4}|${MONTH}\\s+\\d{1,2},?\\s+\\d{3,4}|${MONTH}\\s+\\d{3,4})\\b`, 'g');
const YEAR = /\b(1[0-9]{3}|20[0-9]{2})s?\b/g;
const NUMBER = /\b\d[\d,.]*(?:\s+(?:million|billion|thousand|hundred))?\b|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|hundred)\b/gi;

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
export function readTypedAnswer(type: AnswerType, cited: readonly Chunk__Output[], relationTerms: readonly string[]): ReadAnswer | undefined {
  if (type !== 'date' && type !== 'number') return undefined;
  for (const sentence of rankedSentences(cited, relationTerms)) {
    const found = type === 'date' ? (firstMatch(FULL_DATE, sentence.text) ?? firstMatch(YEAR, sentence.text)) : firstMatch(NUMBER, sentence.text);
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

const EARLIER = /\b(first|earlier|earliest|older|oldest|before|sooner)\b/i;
const LATER = /\b(later|latest|younger|youngest|after|last|newer|more recent(?:ly)?)\b/i;

/**
 * Which option a date comparison picks: "which came out first" wants the earlier year, "who is
 * older" the earlier birth year, "died later" the later death year. Undefined when the question
 * compares something else or the evidence gives no years.
 */
export function pickByYear(question: string, options: readonly { option: string; chunk: Chunk__Output | undefined }[]): string | undefined {
  const wantsEarlier = EARLIER.test(question);
  const wantsLater = LATER.test(question);
  if (wantsEarlier === wantsLater) return undefined;
  const wantsDeath = /\b(died|death|dead)\b/i.test(question);
  const dated = options
    .map(({ option, chunk }) => ({ option, year: chunk ? yearOf(chunk, wantsDeath) : undefined }))
    .filter((entry): entry is { option: string; year: number } => entry.year !== undefined);
  if (dated.length < 2) return undefined;
  dated.sort((a, b) => a.year - b.year);
  const chosen = wantsEarlier ? dated[0] : dated.at(-1);
  const other = wantsEarlier ? dated.at(-1) : dated[0];
  return chosen && other && chosen.year !== other.year ? chosen.option : undefined;
}
