export * from './event-pipeline.js';
export * from './question-ends.js';
export * from './question-log.js';
export * from './question-queue.js';
export * from './streams.js';
export * from './operator-controls.js';
