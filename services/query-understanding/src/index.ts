export { configSchema, type Config } from './config.js';
export {
  startQueryUnderstandingService,
  type QueryUnderstandingDeps,
  type QueryUnderstandingService,
} from './service.js';
