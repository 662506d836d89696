import type { Chunk__Output } from '@hopline/contracts';
import { toHoplineError, type HoplineError } from '@hopline/contracts';
import { claimOf, isEmptyClaim, supports, type Claim } from '../offline/claims.js';

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
  /** Claims written without a citation and cited to the evidence that states them. */
  uncitedCited: number;
  /** Sentences dropped because no evidence states what they claim. */
  unsupportedSentences: number;
  /** Sentences dropped because the answer had already said them. */
  repeatedSentences: number;
  /**
   * Why the text stopped before the writer finished (its stream failed or was cut); the
   * unfinished sentence it was writing was not sent. Undefined when the writer finished.
   */
  interruption?: HoplineError;
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

export interface WriterOptions {
  /**
   * Whether text that cites nothing is checked like a claim (`checked`, the default: a model's
   * words) or passed as framing (`trusted`: the offline reasoner's own templates, such as
   * "What was not found: …", which cite every fact they state).
   */
  uncited?: 'checked' | 'trusted';
  /**
   * Once it aborts (the asker gone, the deadline passed) no further sentence is sent, whether or
   * not the deltas heed it: it is the interruption.
   */
  signal?: AbortSignal;
}

/**
 * Streams an answer sentence by sentence, checking every sentence against the evidence as it
 * goes, cited or not. A citation that names no evidence is removed, and a sentence whose only
 * citations were such is not sent. Each claim (the text before a citation group, and a sentence
 * or tail with no citation) must be stated by the chunks it cites — see `claimOf`: its names and
 * numbers exactly, most of its words; when they do not, the claim is cited to the evidence that
 * states it, and when none does, the sentence is not sent. Only framing that claims nothing
 * passes uncited. A sentence the answer already said is not sent twice. When the deltas fail,
 * or the signal aborts, the unfinished sentence is not sent and the failure is returned as
 * `interruption`. Every
 * claim the reader sees resolves to a chunk that states it.
 */
export async function writeAnswer(
  deltas: AsyncIterable<string>,
  evidence: ReadonlyMap<number, Chunk__Output>,
  send: (text: string) => Promise<void>,
  options: WriterOptions = {},
): Promise<WrittenAnswer> {
  const result: WrittenAnswer = {
    text: '',
    cited: [],
    rejected: [],
    droppedSentences: 0,
    recited: 0,
    uncitedCited: 0,
    unsupportedSentences: 0,
    repeatedSentences: 0,
  };
  const said = new Set<string>();
  let pending = '';

  const chunksOf = (numbers: readonly number[]) =>
    numbers.map((n) => evidence.get(n)).filter((chunk): chunk is Chunk__Output => chunk !== undefined);
  const states = (numbers: readonly number[], claim: Claim) => supports(chunksOf(numbers), claim);
  const phrase = (text: string): Claim => ({ phrases: [text], terms: [] });
  const term = (text: string): Claim => ({ phrases: [], terms: [text] });
  const contributes = (n: number, claim: Claim) =>
    claim.phrases.some((text) => states([n], phrase(text))) || claim.terms.some((text) => states([n], term(text)));

  /**
   * The numbers that state the claim: the cited ones that state part of it (when together they
   * state all), else the one other chunk that states all in most of its words, else the fewest
   * that do between them.
   */
  const support = (claim: Claim, cited: readonly number[]): number[] | undefined => {
    if (isEmptyClaim(claim)) return [...cited];
    const stating = cited.filter((n) => contributes(n, claim));
    if (stating.length > 0 && states(stating, claim)) return stating;
    const all = [...evidence.keys()];
    // Of the chunks that state it alone, the one that uses most of its words.
    const used = (n: number) => claim.terms.filter((text) => states([n], term(text))).length;
    const single = all.filter((n) => states([n], claim)).sort((a, b) => used(b) - used(a))[0];
    if (single !== undefined) return [single];
    const cover: number[] = [];
    for (const text of claim.phrases) {
      if (states(cover, phrase(text))) continue;
      const found = all.find((n) => states([n], phrase(text)));
      if (found === undefined) return undefined;
      cover.push(found);
    }
    // Then the chunks that use most of the words still missing, until the claim is stated.
    while (!states(cover, claim)) {
      const next = all
        .filter((n) => !cover.includes(n))
        .map((n) => ({
          n,
          gain: claim.terms.filter((text) => !states(cover, term(text)) && states([n], term(text))).length,
        }))
        .sort((a, b) => b.gain - a.gain)[0];
      if (!next || next.gain === 0) return undefined;
      cover.push(next.n);
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
    let checked = sentence.replace(CITATION_RUN, (run: string, offset: number) => {
      const claim = sentence.slice(claimStart, offset);
      claimStart = offset + run.length;
      // A claim whose citations all name no evidence is checked as an uncited one.
      const valid = [...new Set(numbersIn(run))].filter((n) => evidence.has(n));
      const supporting = support(claimOf(claim), valid);
      if (!supporting) {
        unsupported = true;
        return '';
      }
      if (supporting.join() !== valid.join()) result.recited += 1;
      return supporting.map((n) => `[${n}]`).join('');
    });
    // What follows the last citation (the whole sentence, when it cites nothing) is a claim too.
    const tail = sentence.slice(claimStart);
    const tailClaim = claimOf(tail);
    if (!unsupported && options.uncited !== 'trusted' && !isEmptyClaim(tailClaim)) {
      const supporting = support(tailClaim, []);
      if (!supporting) unsupported = true;
      else {
        result.uncitedCited += 1;
        const marks = supporting.map((n) => `[${n}]`).join('');
        checked = checked.replace(/(\s*[.!?。！？]*\s*)$/u, ` ${marks}$1`);
      }
    }
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

  const stream = deltas[Symbol.asyncIterator]();
  let finished = false;
  try {
    for (;;) {
      let step: IteratorResult<string>;
      try {
        step = await stream.next();
      } catch (error) {
        // The sentence being written when the stream broke is unfinished: it is not sent.
        finished = true;
        result.interruption = toHoplineError(error);
        return result;
      }
      if (step.done) break;
      if (options.signal?.aborted) {
        result.interruption = toHoplineError(options.signal.reason);
        return result;
      }
      pending += step.value;
      let cut = 0;
      SENTENCE_END.lastIndex = 0;
      for (const match of pending.matchAll(SENTENCE_END)) cut = match.index + match[0].length;
      if (cut === 0) continue;
      const complete = pending.slice(0, cut);
      pending = pending.slice(cut);
      // Several sentences may have arrived at once; each is checked on its own.
      for (const sentence of complete.split(SENTENCE_SPLIT)) {
        if (options.signal?.aborted) {
          result.interruption = toHoplineError(options.signal.reason);
          return result;
        }
        await release(sentence);
      }
    }
    finished = true;
  } finally {
    // A send that failed leaves the stream open: close it, so the model request ends too.
    if (!finished) await stream.return?.();
  }
  if (pending.trim() !== '') await release(pending);
  return result;
}
