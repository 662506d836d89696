export { configSchema, type Config } from './config.js';
export { startHopReasonerService, type HopReasonerService, type HopReasonerServiceDeps } from './service.js';
export { startQuestionJobs, type QuestionJobs, type QuestionJobsDeps } from './question-jobs.js';
