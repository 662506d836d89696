export { embeddedConfigSchema, type EmbeddedConfig } from './config.js';
export { DEMO_CORPUS_DIR, loadDemoCorpus } from './demo-corpus.js';
export { DEV_PRINCIPAL, loadOrCreateDevKey } from './dev-key.js';
export { startEmbedded, type Embedded } from './embedded.js';
