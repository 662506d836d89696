export { createAnalyzer } from './analyzer.js';
export type { AnalyzeOptions, Analyzer, AnalyzerDependencies } from './analyzer.js';
export { analyzeByRules } from './rules/rule-analysis.js';
export type { RuleAnalysis } from './rules/rule-analysis.js';
export { detectSignals } from './rules/signals.js';
export type { QuestionSignals } from './rules/signals.js';
export { modelPlanSchema } from './model-plan.js';
export type { ModelPlan } from './model-plan.js';
export { configSchema, type Config } from './config.js';
export {
  startQueryUnderstandingService,
  type QueryUnderstandingDeps,
  type QueryUnderstandingService,
} from './service.js';
