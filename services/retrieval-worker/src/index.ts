export { openBackends, type Backends } from './backends.js';
export { configSchema, type Config } from './config.js';
export { startRetrievalWorker, type RetrievalWorker, type RetrievalWorkerDeps } from './worker.js';
