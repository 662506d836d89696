import { UsageMeter } from '@hopline/models';
import type { Chunk__Output } from '@hopline/contracts';
import type { HopExtractionInput, ModelCallContext, PreviousHop } from '../../src/index.js';

/** A model call context with a minute to run, for calling the offline reasoner directly. */
export function callContext(): ModelCallContext {
  return { deadlineUnixMs: Date.now() + 60_000, signal: new AbortController().signal, usage: new UsageMeter() };
}

/**
 * The first hop of a two-hop question over the given chunks; a test overrides what its step
 * differs in (a later hop, its query, its chunks, the hops before it).
 */
export function hopInputs(question: string, chunks: Chunk__Output[]) {
  return (overrides: Partial<HopExtractionInput>): HopExtractionInput => ({
    question,
    focus: question,
    hop: 1,
    expectedHops: 2,
    hopsLeft: 2,
    query: question,
    chunks,
    previous: [],
    ...overrides,
  });
}

/**
 * What the second hop differs in from the first, as the loop sends it: the query hop 1 built, hop 1
 * (its finding over the chunks it cited) as the previous hop, and the chunks hop 2 retrieved.
 */
export function secondHopOf(
  question: string,
  first: PreviousHop['finding'],
  cited: Chunk__Output[],
  chunks: HopExtractionInput['chunks'],
): Partial<HopExtractionInput> {
  return {
    hop: 2,
    hopsLeft: 1,
    query: first.nextQuery,
    chunks,
    previous: [{ query: question, finding: first, cited }],
  };
}
