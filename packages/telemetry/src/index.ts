export * from './instrument.js';
export * from './propagation.js';
