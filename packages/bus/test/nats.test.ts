import { startNats } from '@hopline/test-support';
import { afterAll, describe } from 'vitest';
import { connectNatsBus } from '../src/index.js';
import { busScenarios } from './scenarios.js';

const nats = await startNats();
afterAll(() => nats[Symbol.asyncDispose]());

describe.skipIf(nats.url === undefined)('NATS adapter', () => {
  busScenarios('nats', ({ onError }) => connectNatsBus({ url: nats.url ?? '', name: 'bus-scenarios', onError }));
});
