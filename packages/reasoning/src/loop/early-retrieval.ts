import type { RetrieveInput, RetrieveOutput } from './ports.js';

/** What became of an early search: the first hop took it, or none did. */
export const EARLY_RETRIEVAL_OUTCOMES = ['taken', 'spent'] as const;
export type EarlyRetrievalOutcome = (typeof EARLY_RETRIEVAL_OUTCOMES)[number];

const sameSeeds = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((seed, index) => seed === b[index]);

/**
 * The first hop's search, started beside the analysis. A chain's first hop searches the question
 * itself unless the analysis rewrote it (sub-questions, a hypothetical answer to embed), so over
 * the fabric, where the analysis and the search are each a round trip, that search need not wait
 * for the plan. The first hop takes it only where it asks exactly what was asked; any other first
 * hop leaves it, and it is dropped: its reply is ignored, the worker's search is what it cost.
 */
export class EarlyRetrieval {
  private pending: Promise<RetrieveOutput> | undefined;
  /** spent until a hop takes the search; read when the question is over. */
  outcome: EarlyRetrievalOutcome = 'spent';

  constructor(
    private readonly input: RetrieveInput,
    pending: Promise<RetrieveOutput>,
  ) {
    // A search no hop takes fails unheard; the hop that takes one hears its failure.
    pending.catch(() => undefined);
    this.pending = pending;
  }

  /** The search, for the first hop to ask, where it asks exactly this one; after that, nothing. */
  take(input: RetrieveInput): Promise<RetrieveOutput> | undefined {
    const pending = this.pending;
    this.pending = undefined;
    const asked = this.input;
    const same =
      input.query === asked.query &&
      input.hydeText === asked.hydeText &&
      input.topK === asked.topK &&
      input.hop === asked.hop &&
      sameSeeds(input.seeds, asked.seeds);
    if (!same || pending === undefined) return undefined;
    this.outcome = 'taken';
    return pending;
  }
}
