export * from './instrument.js';
export * from './logger.js';
export * from './metrics.js';
export * from './ops-server.js';
export * from './propagation.js';
export { spansRecorded } from './recording.js';
export * from './sdk.js';
export * from './service-scope.js';
