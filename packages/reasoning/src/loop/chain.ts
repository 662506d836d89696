import type { Chunk__Output, StopReason__Output } from '@hopline/contracts';
import { StopReason } from '@hopline/contracts';
import type { PreviousHop } from '../reasoner/reasoner.js';
import type { HopOutcome } from './hop.js';
import { fuseRankedLists } from './evidence.js';
import { QuestionInterrupted, runHop } from './hop.js';
import type { QuestionRun } from './question-run.js';
import { isOn } from '../switches.js';

export interface ChainStart {
  /** What the chain answers: the question, or one sub-question of a plan. */
  focus: string;
  firstQuery: string;
  expectedHops: number;
  /** Hops of earlier chains this one continues from (a dependent sub-question's dependencies). */
  previous?: readonly PreviousHop[];
  /** Hops this chain may take. */
  maxHops: number;
  hydeText?: string;
  bridgeEntity?: string;
  deadlineUnixMs?: number;
  signal?: AbortSignal;
}

export interface ChainResult {
  hops: HopOutcome[];
  stopReason: StopReason__Output;
  /** The last hop's ranked chunks. */
  lastRanked: Chunk__Output[];
  /** The question is answered: the last hop said done, with an answer. */
  complete: boolean;
  /** What the chain was still looking for when it stopped short. */
  missing: string;
}

export interface StopRanking {
  /** Hops of this chain its analysis planned; a later one followed a bridge the reasoner read. */
  plannedHops?: number;
  fuseOnUnknown?: boolean;
  fuseUnplanned?: boolean;
}

/**
 * The ranked chunks a chain hands to the final evidence: its last hop's. A later hop that found
 * nothing about the bridges it was sent for (UNKNOWN) searched for what may be the wrong bridge,
 * so its ranking is fused with the hop before it, whose search found those bridges: the evidence
 * around the last confirmed link stays, and whatever the failed search did find still counts.
 * So are the hops past those the analysis planned, from the last planned one on: they follow a
 * bridge the reasoner read from words the evidence left unexplained, which may be a stray (a name
 * near "同一个月"), and the planned hop's ranking holds what the question itself names.
 */
export function rankedAtStop(
  hops: readonly HopOutcome[],
  stopReason: StopReason__Output,
  { plannedHops = hops.length, fuseOnUnknown = true, fuseUnplanned = true }: StopRanking = {},
): Chunk__Output[] {
  const last = hops.at(-1);
  const before = hops.at(-2);
  if (!last) return [];
  if (fuseUnplanned && plannedHops >= 1 && hops.length > plannedHops)
    return fuseRankedLists(hops.slice(plannedHops - 1).map((hop) => hop.ranked));
  if (stopReason !== StopReason.UNKNOWN || !before || !fuseOnUnknown) return last.ranked;
  return fuseRankedLists([before.ranked, last.ranked]);
}

const normalizeQuery = (query: string) => query.toLowerCase().replace(/\s+/g, ' ').trim();

/**
 * The loop of ARCHITECTURE.md: hop after hop, each query built from the previous hop's answer,
 * until the evidence suffices or a stop reason says otherwise. Every stop is one of the
 * proto's StopReasons; none is an exception.
 */
export async function runChain(run: QuestionRun, start: ChainStart): Promise<ChainResult> {
  const hops: HopOutcome[] = [];
  const previous: PreviousHop[] = [...(start.previous ?? [])];
  const askedQueries = new Set(previous.map((step) => normalizeQuery(step.query)));
  const deadlineUnixMs = start.deadlineUnixMs ?? run.request.deadlineUnixMs;
  const signal = start.signal ?? run.signal;
  let query = start.firstQuery;
  let bridgeEntity = start.bridgeEntity ?? '';

  const finish = (stopReason: StopReason__Output, missing: string): ChainResult => {
    const last = hops.at(-1);
    const complete =
      stopReason === StopReason.SUFFICIENT && last !== undefined && !last.finding.unknown && last.finding.answer !== '';
    const lastRanked = rankedAtStop(hops, stopReason, {
      plannedHops: start.expectedHops - (start.previous?.length ?? 0),
      fuseOnUnknown: isOn(run.settings.switchedOff, 'unknownFusion'),
      fuseUnplanned: isOn(run.settings.switchedOff, 'unplannedFusion'),
    });
    return { hops, stopReason, lastRanked, complete, missing: complete ? '' : missing };
  };

  const lastHopInChain = previous.length + start.maxHops;
  for (let hopInChain = previous.length + 1; hopInChain <= lastHopInChain; hopInChain += 1) {
    const stop = run.stopBeforeHop(deadlineUnixMs);
    if (stop) return finish(stop, query);
    if (askedQueries.has(normalizeQuery(query))) return finish(StopReason.DUPLICATE, query);
    askedQueries.add(normalizeQuery(query));

    let outcome: HopOutcome;
    try {
      outcome = await runHop(run, {
        focus: start.focus,
        query,
        hopInChain,
        expectedHops: start.expectedHops,
        hopsLeft: lastHopInChain - hopInChain,
        previous,
        hydeText: hopInChain === 1 ? (start.hydeText ?? '') : '',
        bridgeEntity,
        deadlineUnixMs,
        signal,
      });
    } catch (error) {
      if (error instanceof QuestionInterrupted) return finish(error.stopReason, query);
      throw error;
    }
    hops.push(outcome);
    const { finding } = outcome;
    // Never invent a bridge entity: what the evidence does not say ends the chain.
    if (finding.unknown) return finish(StopReason.UNKNOWN, query);
    previous.push({ query, finding, cited: outcome.cited });
    const confident =
      hopInChain >= start.expectedHops && finding.answer !== '' && finding.confidence >= run.settings.stopConfidence;
    if (finding.done || confident || finding.nextQuery.trim() === '') return finish(StopReason.SUFFICIENT, '');
    if (outcome.newChunks === 0) return finish(StopReason.NO_NEW_EVIDENCE, finding.nextQuery);
    query = finding.nextQuery;
    bridgeEntity = finding.answer;
  }
  return finish(StopReason.MAX_HOPS, query);
}
