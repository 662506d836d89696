import type { RecallSummary } from '../metrics.js';
import { summarizeByDataset } from '../metrics.js';
import type { QuestionOutcome, ReasoningOutcome } from '../outcome.js';
import { bestAnswerScore } from './answer-metrics.js';

export interface ReasoningFigures {
  /** Exact match and F1 of the short answers, percent, HotpotQA normalisation. */
  em: number;
  f1: number;
  avgHops: number;
  llmCallsPerQuestion: number;
  /** Share of questions per stop reason, percent. */
  stopReasons: Record<string, number>;
  /** Share of questions per route, percent. */
  routes: Record<string, number>;
  /** The single-shot figures of the same run: one retrieval per question, its first k chunks. */
  singleShot: {
    chainRecall: number;
    supportRecall: number;
    byDataset: Record<string, Pick<RecallSummary, 'chainRecall' | 'supportRecall'>>;
  };
  /** EM, F1 and hops per dataset. */
  reasoningByDataset: Record<string, { em: number; f1: number; avgHops: number }>;
}

const round1 = (value: number) => Math.round(value * 10) / 10;
const round2 = (value: number) => Math.round(value * 100) / 100;

function shares(values: readonly string[]): Record<string, number> {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return Object.fromEntries(
    [...counts.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([name, count]) => [name, round1((100 * count) / values.length)]),
  );
}

function answerFigures(reasoning: readonly ReasoningOutcome[]) {
  let em = 0;
  let f1 = 0;
  let hops = 0;
  for (const outcome of reasoning) {
    const score = bestAnswerScore(outcome.answer, outcome.goldAnswers);
    em += score.em ? 1 : 0;
    f1 += score.f1;
    hops += outcome.hops;
  }
  const n = Math.max(1, reasoning.length);
  return { em: round1((100 * em) / n), f1: round1((100 * f1) / n), avgHops: round2(hops / n) };
}

export function summarizeReasoning(outcomes: readonly QuestionOutcome[], k: number): ReasoningFigures {
  const reasoned = outcomes.filter(
    (outcome): outcome is QuestionOutcome & { reasoning: ReasoningOutcome } => outcome.reasoning !== undefined,
  );
  const reasoning = reasoned.map((outcome) => outcome.reasoning);
  const single = summarizeByDataset(
    reasoned.map((outcome) => ({ ...outcome, rankedDocIds: outcome.reasoning.singleShotDocIds })),
    k,
  );
  const byDataset = new Map<string, ReasoningOutcome[]>();
  for (const outcome of reasoned)
    byDataset.set(outcome.dataset, [...(byDataset.get(outcome.dataset) ?? []), outcome.reasoning]);
  return {
    ...answerFigures(reasoning),
    llmCallsPerQuestion: round2(
      reasoning.reduce((sum, outcome) => sum + outcome.llmCalls, 0) / Math.max(1, reasoning.length),
    ),
    stopReasons: shares(reasoning.map((outcome) => outcome.stopReason)),
    routes: shares(reasoning.map((outcome) => outcome.route)),
    singleShot: {
      chainRecall: single.overall.chainRecall,
      supportRecall: single.overall.supportRecall,
      byDataset: Object.fromEntries(
        Object.entries(single.byDataset).map(([name, summary]) => [
          name,
          { chainRecall: summary.chainRecall, supportRecall: summary.supportRecall },
        ]),
      ),
    },
    reasoningByDataset: Object.fromEntries(
      [...byDataset.entries()].sort().map(([name, items]) => [name, answerFigures(items)]),
    ),
  };
}

/** Lines for the human-readable report. */
export function formatReasoning(
  figures: ReasoningFigures,
  byDataset: Record<string, RecallSummary>,
  k: number,
): string[] {
  const header = `${'dataset'.padEnd(18)}${`single@${k}`.padStart(10)}${`chain@${k}`.padStart(10)}${'gain'.padStart(8)}${'EM'.padStart(8)}${'F1'.padStart(8)}${'hops'.padStart(8)}`;
  const row = (
    name: string,
    multi: number,
    single: number,
    answers: { em: number; f1: number; avgHops: number } | undefined,
  ) =>
    `${name.padEnd(18)}${single.toFixed(1).padStart(10)}${multi.toFixed(1).padStart(10)}${(multi - single).toFixed(1).padStart(8)}` +
    `${(answers?.em ?? 0).toFixed(1).padStart(8)}${(answers?.f1 ?? 0).toFixed(1).padStart(8)}${(answers?.avgHops ?? 0).toFixed(2).padStart(8)}`;
  const overall = Object.values(byDataset);
  const overallChain =
    overall.length === 0
      ? 0
      : overall.reduce((sum, s) => sum + s.chainRecall * s.questions, 0) /
        overall.reduce((sum, s) => sum + s.questions, 0);
  return [
    '',
    'multi-hop beside single-shot (same run, same retriever):',
    header,
    ...Object.entries(byDataset).map(([name, summary]) =>
      row(
        name,
        summary.chainRecall,
        figures.singleShot.byDataset[name]?.chainRecall ?? 0,
        figures.reasoningByDataset[name],
      ),
    ),
    row('all', overallChain, figures.singleShot.chainRecall, figures),
    `single-shot support@${k} ${figures.singleShot.supportRecall.toFixed(1)}; LLM calls per question ${figures.llmCallsPerQuestion}`,
    `stop reasons (%): ${Object.entries(figures.stopReasons)
      .map(([name, share]) => `${name} ${share}`)
      .join(', ')}`,
    `routes (%): ${Object.entries(figures.routes)
      .map(([name, share]) => `${name} ${share}`)
      .join(', ')}`,
  ];
}
