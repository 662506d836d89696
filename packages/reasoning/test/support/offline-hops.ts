import { UsageMeter } from '@hopline/models';
import type { Chunk__Output } from '@hopline/contracts';
import type { HopExtractionInput, ModelCallContext } from '../../src/index.js';

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
