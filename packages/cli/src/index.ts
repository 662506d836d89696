export * from './api-key.js';
export * from './sse-client.js';
export * from './documents.js';
export { DEFAULT_GATEWAY_URL } from './command.js';
