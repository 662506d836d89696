export { configSchema, type Config } from './config.js';
export { startRerankerService, type RerankerService, type RerankerServiceDeps } from './service.js';
