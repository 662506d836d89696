export type {
  EvidenceItem,
  HopExtractionInput,
  HopFinding,
  ModelCallContext,
  PreviousHop,
  Reasoner,
  SynthesisHop,
  SynthesisInput,
} from './reasoner/reasoner.js';
export { createModelReasoner } from './reasoner/model-reasoner.js';
export type { ModelReasonerOptions } from './reasoner/model-reasoner.js';
export { createOfflineReasoner } from './offline/offline-reasoner.js';
export type { OfflineReasonerOptions } from './offline/offline-reasoner.js';
export { gradeEvidence } from './offline/grade.js';
export {
  answerType,
  choiceOptions,
  chineseComparisonOptions,
  questionAnchors,
  relationTerms,
  sameEntity,
} from './offline/question.js';
export type { AnswerType } from './offline/question.js';
export { isRoleNoun, ROLE_NOUNS } from './offline/relations.js';
export { bareTitle, entityKey, namedSpans, states } from './offline/text.js';
export { claimPhrases } from './offline/claims.js';
export { fenceEvidence, prompts } from './prompts.js';
export type { FencedEvidence, ReasoningPrompt } from './prompts.js';
export { createAnalyzer } from './analysis/analyzer.js';
export type { AnalyzeOptions, Analyzer, AnalyzerDependencies } from './analysis/analyzer.js';
export { analyzeByRules } from './analysis/rules/rule-analysis.js';
export type { RuleAnalysis } from './analysis/rules/rule-analysis.js';
export { createHopReasoner } from './loop/hop-reasoner.js';
export type { AnswerOptions, AnswerOutcome, HopReasoner, HopReasonerDependencies } from './loop/hop-reasoner.js';
export type {
  AnalyzerPort,
  CallContext,
  Clock,
  EventSink,
  QaEventDraft,
  RerankerPort,
  RerankInput,
  RerankOutput,
  RetrieveInput,
  RetrieveOutput,
  RetrieverPort,
} from './loop/ports.js';
export { systemClock } from './loop/ports.js';
export { HARD_MAX_HOPS, resolveSettings } from './loop/settings.js';
export type { HopReasonerConfig, HopReasonerSettings } from './loop/settings.js';
