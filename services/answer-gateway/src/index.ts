export { addApiKey, ApiKeyStore, generateApiKey, hashApiKey, type ApiKeysFile, type Principal } from './api-keys.js';
export { AnswerCache, normaliseQuestion, type AnswerCacheStore } from './cache/answer-cache.js';
export { MemoryCacheStore } from './cache/memory-store.js';
export { RedisCacheStore } from './cache/redis-store.js';
export { configSchema, type Config } from './config.js';
export { EVENT_SCHEMA, renderEvent } from './event-json.js';
export {
  createAnswerCache,
  startAnswerGateway,
  type AnswerGateway,
  type AnswerGatewayOptions,
  type GatewayConfig,
  type StopOptions,
} from './gateway.js';
