import { reportGroup } from '../data/eval-set.js';
import type { QuestionOutcome, SystemName, SystemRun } from '../outcome.js';
import { SYSTEMS } from '../outcome.js';
import { asksOrder, bestAnswerScore, isJudgement } from './answers.js';
import { hopPath, scoreRetrieval } from './retrieval.js';

export interface AnswerFigures {
  /** Answerable questions scored. */
  questions: number;
  /** Exact match and F1 of the short answers, percent (see answers.ts for the normalisation). */
  em: number;
  f1: number;
  /** Questions whose gold answer is a yes/no judgement, and the share answered with the right one, percent. */
  judgements: { questions: number; right: number };
  /**
   * The other questions, and the share whose answer names the gold one, read as an F1 of at
   * least 0.5: the right event named in other words counts, an answer that shares only a date
   * or a name with the gold mostly does not. Percent.
   */
  named: { questions: number; right: number };
  /**
   * Of those, the questions that ask which of the things they name came first or last
   * (`asksOrder`), and the share whose answer names the right one, read as for `named`. Percent.
   */
  ordered: { questions: number; right: number };
  /** Share of answerable questions answered rather than abstained on, percent. */
  answered: number;
  /** Of the cited claims the claim checker could read, the share their cited chunks state, percent. */
  citationSupport: { claims: number; supported: number };
}

export interface LoopFigures {
  avgHops: number;
  /**
   * Entry n-1: of the questions with at least n gold documents, the share whose hop n held
   * (see `hopPath`), percent, and how many such questions there were.
   */
  perHopRecall: Array<{ questions: number; recall: number }>;
  /** Questions per break point: "intact", or the first hop that did not hold. */
  breakPoints: Record<string, number>;
  /** Questions the analysis split into sub-questions, and the share of those sub-questions answered, percent. */
  subQuestions: { questions: number; coverage: number };
  /** Share of questions per stop reason and per route, percent. */
  stopReasons: Record<string, number>;
  routes: Record<string, number>;
}

export interface SystemSummary {
  questions: number;
  /** Share of questions whose gold documents are ALL in the top k, percent. */
  chainRecall: number;
  /** Share of all gold documents found in the top k, percent. */
  supportRecall: number;
  /** Mean reciprocal rank of the first gold chunk in the top k. */
  mrr: number;
  latency: { p50Ms: number; p95Ms: number; meanMs: number };
  /** Means per question. */
  retrievalCalls: number;
  llmCalls: number;
  tokens: number;
  answers?: AnswerFigures;
  loop?: LoopFigures;
}

/**
 * Abstention on questions whose evidence is missing: each of `--unanswerable N` questions asked
 * over a copy of the corpus without one of its gold documents (and questions marked unanswerable
 * in the data), against the same questions asked over the whole corpus.
 */
export interface AbstentionFigures {
  unanswerable: number;
  /** Share of unanswerable askings that abstained, percent. */
  recall: number;
  /** Of all abstentions on the unanswerable askings and their whole-corpus twins, the share on unanswerable ones, percent. */
  precision: number;
}

export interface GroupSummary {
  questions: number;
  systems: Partial<Record<SystemName, SystemSummary>>;
  abstention?: Partial<Record<SystemName, AbstentionFigures>>;
}

const NAMED_F1 = 0.5;

const round = (value: number, digits = 1) => {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
};
const percent = (part: number, whole: number) => (whole === 0 ? 0 : round((100 * part) / whole));
const mean = (values: readonly number[]) =>
  values.length === 0 ? 0 : values.reduce((sum, value) => sum + value, 0) / values.length;

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

function shares(values: readonly string[]): Record<string, number> {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return Object.fromEntries(
    [...counts.entries()].sort((a, b) => b[1] - a[1]).map(([name, count]) => [name, percent(count, values.length)]),
  );
}

type Asked = { outcome: QuestionOutcome; run: SystemRun };

function answerFigures(asked: readonly Asked[]): AnswerFigures | undefined {
  const answering = asked.filter(({ outcome, run }) => run.answered && outcome.question.answerable);
  if (answering.length === 0) return undefined;
  let em = 0;
  let f1 = 0;
  let judgements = 0;
  let right = 0;
  let others = 0;
  let named = 0;
  let ordered = 0;
  let orderedRight = 0;
  let answered = 0;
  let claims = 0;
  let supported = 0;
  for (const { outcome, run } of answering) {
    const trace = run.answered!;
    const score = bestAnswerScore(trace.answer, outcome.question.answers);
    em += score.em ? 1 : 0;
    f1 += score.f1;
    if (isJudgement(outcome.question.answers[0] ?? '')) {
      judgements += 1;
      if (score.em) right += 1;
    } else {
      others += 1;
      if (score.f1 >= NAMED_F1) named += 1;
      if (asksOrder(outcome.question.question)) {
        ordered += 1;
        if (score.f1 >= NAMED_F1) orderedRight += 1;
      }
    }
    if (!trace.abstained) answered += 1;
    claims += trace.claims.checked;
    supported += trace.claims.supported;
  }
  return {
    questions: answering.length,
    em: percent(em, answering.length),
    f1: percent(f1, answering.length),
    judgements: { questions: judgements, right: percent(right, judgements) },
    named: { questions: others, right: percent(named, others) },
    ordered: { questions: ordered, right: percent(orderedRight, ordered) },
    answered: percent(answered, answering.length),
    citationSupport: { claims, supported: percent(supported, claims) },
  };
}

function loopFigures(asked: readonly Asked[]): LoopFigures | undefined {
  const looped = asked.filter(({ run }) => run.answered);
  if (looped.length === 0) return undefined;
  const perHop: Array<{ questions: number; held: number }> = [];
  const breakPoints = new Map<string, number>();
  let planned = 0;
  let subQuestions = 0;
  let answeredSubQuestions = 0;
  for (const { outcome, run } of looped) {
    const trace = run.answered!;
    const { question } = outcome;
    if (question.goldDocIds.length > 0) {
      const path = hopPath(
        question.goldDocIds,
        question.hopOrdered,
        trace.hops.map((hop) => hop.docIds),
      );
      path.held.forEach((held, index) => {
        const slot = (perHop[index] ??= { questions: 0, held: 0 });
        slot.questions += 1;
        if (held) slot.held += 1;
      });
      const key = path.breakPoint === 0 ? 'intact' : String(path.breakPoint);
      breakPoints.set(key, (breakPoints.get(key) ?? 0) + 1);
    }
    if (trace.subQuestions > 0) {
      planned += 1;
      subQuestions += trace.subQuestions;
      answeredSubQuestions += Math.min(
        trace.subQuestions,
        trace.hops.filter((hop) => !hop.unknown && hop.answer !== '').length,
      );
    }
  }
  const breakOrder = (key: string) => (key === 'intact' ? 0 : Number(key));
  return {
    avgHops: round(mean(looped.map(({ run }) => run.answered!.hops.length)), 2),
    perHopRecall: perHop.map((slot) => ({ questions: slot.questions, recall: percent(slot.held, slot.questions) })),
    breakPoints: Object.fromEntries([...breakPoints.entries()].sort((a, b) => breakOrder(a[0]) - breakOrder(b[0]))),
    subQuestions: { questions: planned, coverage: percent(answeredSubQuestions, subQuestions) },
    stopReasons: shares(looped.map(({ run }) => run.answered!.stopReason)),
    routes: shares(looped.map(({ run }) => run.answered!.route)),
  };
}

export function summarizeSystem(asked: readonly Asked[], k: number): SystemSummary {
  let gold = 0;
  let found = 0;
  let complete = 0;
  let reciprocal = 0;
  const scored = asked.filter(({ outcome }) => outcome.question.goldDocIds.length > 0);
  for (const { outcome, run } of scored) {
    const score = scoreRetrieval(outcome.question.goldDocIds, run.rankedDocIds, k);
    gold += score.gold;
    found += score.found;
    if (score.chainComplete) complete += 1;
    reciprocal += score.reciprocalRank;
  }
  const latencies = asked.map(({ run }) => run.latencyMs);
  const answers = answerFigures(asked);
  const loop = loopFigures(asked);
  return {
    questions: asked.length,
    chainRecall: percent(complete, scored.length),
    supportRecall: percent(found, gold),
    mrr: scored.length === 0 ? 0 : round(reciprocal / scored.length, 3),
    latency: {
      p50Ms: round(percentile(latencies, 50), 2),
      p95Ms: round(percentile(latencies, 95), 2),
      meanMs: round(mean(latencies), 2),
    },
    retrievalCalls: round(mean(asked.map(({ run }) => run.retrievalCalls)), 2),
    llmCalls: round(mean(asked.map(({ run }) => run.llmCalls)), 2),
    tokens: round(mean(asked.map(({ run }) => run.tokens)), 0),
    ...(answers ? { answers } : {}),
    ...(loop ? { loop } : {}),
  };
}

function abstentionFigures(outcomes: readonly QuestionOutcome[], system: SystemName): AbstentionFigures | undefined {
  let unanswerable = 0;
  let abstainedRight = 0;
  let abstainedWrong = 0;
  for (const outcome of outcomes) {
    const whole = outcome.runs[system]?.answered;
    const copy = outcome.withoutGold?.runs[system]?.answered;
    if (copy) {
      unanswerable += 1;
      if (copy.abstained) abstainedRight += 1;
      if (whole?.abstained) abstainedWrong += 1;
    } else if (whole && !outcome.question.answerable) {
      unanswerable += 1;
      if (whole.abstained) abstainedRight += 1;
    }
  }
  if (unanswerable === 0) return undefined;
  return {
    unanswerable,
    recall: percent(abstainedRight, unanswerable),
    precision: percent(abstainedRight, abstainedRight + abstainedWrong),
  };
}

export function summarizeGroup(outcomes: readonly QuestionOutcome[], k: number): GroupSummary {
  const systems: Partial<Record<SystemName, SystemSummary>> = {};
  const abstention: Partial<Record<SystemName, AbstentionFigures>> = {};
  for (const system of SYSTEMS) {
    const asked = outcomes.flatMap((outcome) => {
      const run = outcome.runs[system];
      return run ? [{ outcome, run }] : [];
    });
    if (asked.length === 0) continue;
    systems[system] = summarizeSystem(asked, k);
    const figures = abstentionFigures(outcomes, system);
    if (figures) abstention[system] = figures;
  }
  return {
    questions: outcomes.length,
    systems,
    ...(Object.keys(abstention).length > 0 ? { abstention } : {}),
  };
}

/**
 * One summary per report group (data set, and data set set apart), groups in name order, and
 * one over every question not set apart.
 */
export function summarizeOutcomes(
  outcomes: readonly QuestionOutcome[],
  k: number,
): { overall: GroupSummary; byGroup: Record<string, GroupSummary> } {
  const groups = new Map<string, QuestionOutcome[]>();
  for (const outcome of outcomes) {
    const name = reportGroup(outcome.question);
    const group = groups.get(name) ?? [];
    group.push(outcome);
    groups.set(name, group);
  }
  const byGroup: Record<string, GroupSummary> = {};
  for (const name of [...groups.keys()].sort()) byGroup[name] = summarizeGroup(groups.get(name) ?? [], k);
  const overall = summarizeGroup(
    outcomes.filter((outcome) => outcome.question.apart === ''),
    k,
  );
  return { overall, byGroup };
}
