export { ablatedFigures, formatAblation, switchDelta } from './ablation.js';
export type { AblatedFigures, SwitchDelta } from './ablation.js';
export { runCli, usage } from './cli.js';
export type { CliOutput } from './cli.js';
export { parseCorpusQuestions, loadCorpusQuestions } from './data/corpus-questions.js';
export { BARE_GOLD, reportGroup } from './data/eval-set.js';
export type { EvalDocument, EvalQuestion, EvalSet } from './data/eval-set.js';
export { loadMultihopFile, paragraphDocId, paragraphText, parseMultihopFile } from './data/multihop-file.js';
export type { Paragraph } from './data/multihop-file.js';
export { foldCounts, foldOf, selectQuestions, SPLITS } from './data/selection.js';
export type { Fold, Selection, Split } from './data/selection.js';
export { EVAL_SCOPE, ingestCorpus } from './knowledge-base.js';
export {
  asksOrder,
  bestAnswerScore,
  characterTokens,
  goldJudgement,
  isJudgement,
  normalizeAnswer,
  openingJudgement,
  scoreAnswer,
  shortAnswer,
} from './metrics/answers.js';
export type { AnswerScore, Judgement } from './metrics/answers.js';
export { citationSupport, citedClaims } from './metrics/citations.js';
export { hopPath, scoreRetrieval } from './metrics/retrieval.js';
export type { HopPath, RetrievalScore } from './metrics/retrieval.js';
export { percentile, summarizeGroup, summarizeOutcomes } from './metrics/summary.js';
export type { AbstentionFigures, AnswerFigures, GroupSummary, LoopFigures, SystemSummary } from './metrics/summary.js';
export { evalModes } from './modes/index.js';
export type { AskQuestion, EvalMode, ModeContext } from './modes/mode.js';
export { singleMode } from './modes/baselines.js';
export { multihopMode } from './modes/multihop.js';
export { SYSTEMS } from './outcome.js';
export type { AnswerTrace, HopTrace, QuestionOutcome, SystemName, SystemRun, SystemRuns } from './outcome.js';
export { outcomeRecord } from './records.js';
export { formatReport } from './report.js';
export { table } from './table.js';
export { openEvalRetrievalStack } from './retrieval-stack.js';
export type { EvalRetrievalStack } from './retrieval-stack.js';
export { chooseUnanswerable, runEval } from './run-eval.js';
export type { EvalReport, RunEvalOptions } from './run-eval.js';
