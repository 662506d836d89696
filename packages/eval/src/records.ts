import { bestAnswerScore } from './metrics/answers.js';
import { hopPath, scoreRetrieval } from './metrics/retrieval.js';
import type { QuestionOutcome, SystemRun, SystemRuns } from './outcome.js';

function runRecord(outcome: QuestionOutcome, run: SystemRun, k: number) {
  const { question } = outcome;
  const retrieval = scoreRetrieval(question.goldDocIds, run.rankedDocIds, k);
  const answered = run.answered;
  const path = answered
    ? hopPath(
        question.goldDocIds,
        question.hopOrdered,
        answered.hops.map((hop) => hop.docIds),
      )
    : undefined;
  const answer = answered && question.answerable ? bestAnswerScore(answered.answer, question.answers) : undefined;
  return {
    ...(answered
      ? {
          route: answered.route,
          hops: answered.hops.map(({ hop, query, docIds, answer: hopAnswer, unknown }) => ({
            hop,
            query,
            evidenceDocIds: docIds,
            answer: hopAnswer,
            unknown,
          })),
          stopReason: answered.stopReason,
          answer: answered.answer,
          text: answered.text,
          abstained: answered.abstained,
        }
      : {}),
    finalEvidenceDocIds: run.rankedDocIds,
    metrics: {
      goldFound: retrieval.found,
      chainComplete: retrieval.chainComplete,
      reciprocalRank: retrieval.reciprocalRank,
      ...(path ? { hopsHeld: path.held, breakPoint: path.breakPoint } : {}),
      ...(answer ? { em: answer.em, f1: answer.f1 } : {}),
      ...(answered ? { claimsChecked: answered.claims.checked, claimsSupported: answered.claims.supported } : {}),
      latencyMs: Math.round(run.latencyMs * 100) / 100,
      retrievalCalls: run.retrievalCalls,
      llmCalls: run.llmCalls,
      tokens: run.tokens,
    },
  };
}

const runsRecord = (outcome: QuestionOutcome, runs: SystemRuns, k: number) =>
  Object.fromEntries(
    Object.entries(runs).flatMap(([system, run]) => (run ? [[system, runRecord(outcome, run, k)]] : [])),
  );

/**
 * One line of `--out`: the question, its gold, and what each system did — hops with their
 * queries and evidence, final evidence, answer, stop reason, break point (0: intact) and the
 * question's own metrics — so a failure can be read, and replayed with `--ids`.
 */
export function outcomeRecord(outcome: QuestionOutcome, k: number): Record<string, unknown> {
  const { question } = outcome;
  return {
    id: question.id,
    dataset: question.dataset,
    ...(question.apart ? { apart: question.apart } : {}),
    question: question.question,
    gold: {
      answers: question.answers,
      docIds: question.goldDocIds,
      hopOrdered: question.hopOrdered,
      answerable: question.answerable,
    },
    systems: runsRecord(outcome, outcome.runs, k),
    ...(outcome.withoutGold
      ? {
          withoutGold: {
            removedDocId: outcome.withoutGold.removedDocId,
            systems: runsRecord(outcome, outcome.withoutGold.runs, k),
          },
        }
      : {}),
  };
}
