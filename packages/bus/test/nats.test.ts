import { UnavailableError } from '@hopline/contracts';
import { freePort, startNats } from '@hopline/test-support';
import { afterAll, describe, expect, it } from 'vitest';
import { connectNatsBus } from '../src/index.js';
import { busScenarios } from './scenarios.js';

const nats = await startNats();
afterAll(() => nats[Symbol.asyncDispose]());

describe.skipIf(nats.url === undefined)('NATS adapter', () => {
  busScenarios('nats', ({ onError }) => connectNatsBus({ url: nats.url ?? '', name: 'bus-scenarios', onError }));
});

describe('NATS adapter - connecting', () => {
  it('connect - no server at the address gives UnavailableError', async () => {
    const port = await freePort();
    await expect(connectNatsBus({ url: `nats://127.0.0.1:${port}`, name: 'nobody-home' })).rejects.toBeInstanceOf(
      UnavailableError,
    );
  });
});
