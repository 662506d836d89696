import type { Chunk__Output } from '@hopline/contracts';
import { claimPhrases } from '../offline/claims.js';
import { states } from '../offline/text.js';

export interface WrittenAnswer {
  text: string;
  /** Evidence numbers the emitted text cites, in first-cited order. */
  cited: number[];
  /** Numbers the writer cited that name no evidence: removed, and their sentences dropped. */
  rejected: number[];
  /** Sentences dropped because their only support was a citation that named no evidence. */
  droppedSentences: number;
  /** Claims whose citations did not state them and were moved to the evidence that does. */
  recited: number;
  /** Sentences dropped because no evidence states what they claim. */
  unsupportedSentences: number;
  /** Sentences dropped because the answer had already said them. */
  repeatedSentences: number;
}

// "[1][2]" and "[1, 2]" cite one claim alike.
const CITATION_RUN = /\[\d+(?:\s*,\s*\d+)*\](?:\s*\[\d+(?:\s*,\s*\d+)*\])*/g;
// A sentence ends at . ! ? and its citation markers, once whitespace follows (so "3." of a
// streamed "3.5" is not cut), or at a Chinese full stop, which needs none.
const SENTENCE_END = /[.!?](?:\s*\[\d+(?:\s*,\s*\d+)*\])*(?=\s)|[。！？](?:\s*\[\d+(?:\s*,\s*\d+)*\])*/g;
const SENTENCE_SPLIT =
  /(?<=[.!?。！？](?:\s*\[\d+(?:\s*,\s*\d+)*\])*)(?=\s)|(?<=[。！？](?:\s*\[\d+(?:\s*,\s*\d+)*\])*)(?=[^\s[])/;

const numbersIn = (run: string) => [...run.matchAll(/\d+/g)].map((match) => Number(match[0]));
const sentenceKey = (sentence: string) =>
  sentence
    .replace(CITATION_RUN, '')
    .replace(/[\s\p{P}]+/gu, ' ')
    .trim()
    .toLowerCase();

/**
 * Streams an answer sentence by sentence, checking every [n] against the evidence as it goes.
 * A citation that names no evidence is removed, and a sentence whose only citations were such
 * is not sent. Each cited claim (the text before a citation group) must be stated by the
 * chunks it cites — its names and numbers, see `claimPhrases`; when they do not, the claim is
 * cited to the evidence that states it, and when none does, the sentence is not sent. A
 * sentence the answer already said is not sent twice. Every claim the reader sees resolves to
 * a chunk that states it.
 */
export async function writeAnswer(
  deltas: AsyncIterable<string>,
  evidence: ReadonlyMap<number, Chunk__Output>,
  send: (text: string) => Promise<void>,
): Promise<WrittenAnswer> {
  const result: WrittenAnswer = {
    text: '',
    cited: [],
    rejected: [],
    droppedSentences: 0,
    recited: 0,
    unsupportedSentences: 0,
    repeatedSentences: 0,
  };
  const said = new Set<string>();
  let pending = '';

  const chunkStates = (n: number, phrase: string) => {
    const chunk = evidence.get(n);
    return chunk !== undefined && (states(chunk.text, phrase) || states(chunk.title, phrase));
  };

  /**
   * The numbers that state every claim: the cited ones that state any (when together they state
   * all), else one other chunk that states all, else the fewest that do between them.
   */
  const support = (claims: readonly string[], cited: readonly number[]): number[] | undefined => {
    if (claims.length === 0) return [...cited];
    const stating = cited.filter((n) => claims.some((claim) => chunkStates(n, claim)));
    if (claims.every((claim) => stating.some((n) => chunkStates(n, claim)))) return stating;
    const all = [...evidence.keys()];
    const single = all.find((n) => claims.every((claim) => chunkStates(n, claim)));
    if (single !== undefined) return [single];
    const cover: number[] = [];
    for (const claim of claims) {
      if (cover.some((n) => chunkStates(n, claim))) continue;
      const found = all.find((n) => chunkStates(n, claim));
      if (found === undefined) return undefined;
      cover.push(found);
    }
    return cover;
  };

  const release = async (sentence: string) => {
    const numbers = numbersIn(sentence.match(CITATION_RUN)?.join(' ') ?? '');
    for (const n of numbers) if (!evidence.has(n) && !result.rejected.includes(n)) result.rejected.push(n);
    if (numbers.length > 0 && numbers.every((n) => !evidence.has(n))) {
      result.droppedSentences += 1;
      return;
    }
    let unsupported = false;
    let claimStart = 0;
    const checked = sentence.replace(CITATION_RUN, (run: string, offset: number) => {
      const claim = sentence.slice(claimStart, offset);
      claimStart = offset + run.length;
      const valid = [...new Set(numbersIn(run))].filter((n) => evidence.has(n));
      if (valid.length === 0) return '';
      const supporting = support(claimPhrases(claim), valid);
      if (!supporting) {
        unsupported = true;
        return '';
      }
      if (supporting.join() !== valid.join()) result.recited += 1;
      return supporting.map((n) => `[${n}]`).join('');
    });
    if (unsupported) {
      result.unsupportedSentences += 1;
      return;
    }
    if (checked.trim() === '') return;
    const key = sentenceKey(checked);
    if (key !== '' && said.has(key)) {
      result.repeatedSentences += 1;
      return;
    }
    said.add(key);
    for (const n of numbersIn(checked.match(CITATION_RUN)?.join(' ') ?? ''))
      if (!result.cited.includes(n)) result.cited.push(n);
    const piece = result.text === '' ? checked.trimStart() : checked;
    result.text += piece;
    await send(piece);
  };

  for await (const delta of deltas) {
    pending += delta;
    let cut = 0;
    SENTENCE_END.lastIndex = 0;
    for (const match of pending.matchAll(SENTENCE_END)) cut = match.index + match[0].length;
    if (cut === 0) continue;
    const complete = pending.slice(0, cut);
    pending = pending.slice(cut);
    // Several sentences may have arrived at once; each is checked on its own.
    for (const sentence of complete.split(SENTENCE_SPLIT)) await release(sentence);
  }
  if (pending.trim() !== '') await release(pending);
  return result;
}
