export { createHopReasoner } from './hop-reasoner.js';
export type { AnswerOptions, AnswerOutcome, HopReasoner, HopReasonerDependencies } from './hop-reasoner.js';
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
} from './ports.js';
export { systemClock } from './ports.js';
export { HARD_MAX_HOPS, resolveSettings } from './settings.js';
export type { HopReasonerConfig, HopReasonerSettings } from './settings.js';
export { configSchema, type Config } from './config.js';
export { startHopReasonerService, type HopReasonerService, type HopReasonerServiceDeps } from './service.js';
