// The hop loop: analyze → hops (a chain, or a plan of sub-questions) → evidence → synthesis.
export { createHopReasoner } from './loop/hop-reasoner.js';
export type { AnswerOptions, AnswerOutcome, HopReasoner, HopReasonerDependencies } from './loop/hop-reasoner.js';
export { EARLY_RETRIEVAL_OUTCOMES } from './loop/early-retrieval.js';
export type { EarlyRetrievalOutcome } from './loop/early-retrieval.js';
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
export { REASONING_SWITCH_NAMES, REASONING_SWITCHES } from './switches.js';
export type { ReasoningSwitch } from './switches.js';
export type { HopReasonerConfig, HopReasonerSettings } from './loop/settings.js';

// Question analysis: the rules, and a planner model where they cannot decide.
export { createAnalyzer } from './analysis/analyzer.js';
export type { AnalyzeOptions, Analyzer, AnalyzerDependencies } from './analysis/analyzer.js';
export { analyzeByRules } from './analysis/rules/rule-analysis.js';
export type { RuleAnalysis } from './analysis/rules/rule-analysis.js';

// The reasoning port a hop and synthesis call, and its two adapters.
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

// The claim check synthesis applies to every cited sentence, for measuring answers the same way.
export { claimStatedBy } from './offline/claims.js';
export type { OfflineReasonerOptions } from './offline/offline-reasoner.js';
