export * from './client.js';
export * from './health.js';
export * from './metadata.js';
export * from './server.js';
export * from './status.js';
export * from './types.js';
export * from './tls.js';
