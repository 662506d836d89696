import type { QuestionOutcome } from './outcome.js';

export interface QuestionScore {
  gold: number;
  found: number;
  /** Every gold paragraph is in the top k. */
  chainComplete: boolean;
}

export interface RecallSummary {
  questions: number;
  /** Share of questions whose gold paragraphs are ALL in the top k, percent. */
  chainRecall: number;
  /** Share of all gold paragraphs found in the top k, percent. */
  supportRecall: number;
  p50Ms: number;
  p95Ms: number;
}

/** A paragraph is found when any chunk of it is among the first k retrieved chunks. */
export function scoreQuestion(
  goldDocIds: readonly string[],
  rankedDocIds: readonly string[],
  k: number,
): QuestionScore {
  const top = new Set(rankedDocIds.slice(0, k));
  const gold = new Set(goldDocIds);
  let found = 0;
  for (const docId of gold) if (top.has(docId)) found++;
  return { gold: gold.size, found, chainComplete: gold.size > 0 && found === gold.size };
}

/** Linear interpolation between closest ranks; NaN for no values. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const position = (p / 100) * (sorted.length - 1);
  const lower = Math.floor(position);
  const upper = Math.ceil(position);
  const low = sorted[lower] as number;
  return low + ((sorted[upper] as number) - low) * (position - lower);
}

function round(value: number, digits: number): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

export function summarizeOutcomes(outcomes: readonly QuestionOutcome[], k: number): RecallSummary {
  let gold = 0;
  let found = 0;
  let complete = 0;
  for (const outcome of outcomes) {
    const score = scoreQuestion(outcome.goldDocIds, outcome.rankedDocIds, k);
    gold += score.gold;
    found += score.found;
    if (score.chainComplete) complete++;
  }
  const latencies = outcomes.map((outcome) => outcome.latencyMs);
  return {
    questions: outcomes.length,
    chainRecall: outcomes.length === 0 ? 0 : round((100 * complete) / outcomes.length, 1),
    supportRecall: gold === 0 ? 0 : round((100 * found) / gold, 1),
    p50Ms: round(percentile(latencies, 50), 3),
    p95Ms: round(percentile(latencies, 95), 3),
  };
}

/** The overall summary and one per dataset, datasets in name order. */
export function summarizeByDataset(
  outcomes: readonly QuestionOutcome[],
  k: number,
): { overall: RecallSummary; byDataset: Record<string, RecallSummary> } {
  const groups = new Map<string, QuestionOutcome[]>();
  for (const outcome of outcomes) {
    const group = groups.get(outcome.dataset) ?? [];
    group.push(outcome);
    groups.set(outcome.dataset, group);
  }
  const byDataset: Record<string, RecallSummary> = {};
  for (const name of [...groups.keys()].sort()) byDataset[name] = summarizeOutcomes(groups.get(name) ?? [], k);
  return { overall: summarizeOutcomes(outcomes, k), byDataset };
}
