export * from './codec.js';
export * from './errors.js';
export * from './events.js';
export * from './proto.js';
export * from './proto-options.js';
export * from './request-context.js';
export * from './subjects.js';
export * from './types.js';
