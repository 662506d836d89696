import { NoRespondersError } from '@hopline/contracts';
import { waitFor } from '@hopline/test-support';
import { describe, expect, it } from 'vitest';
import { createMemoryBroker, createMemoryBus } from '../src/index.js';
import { busScenarios } from './scenarios.js';

const broker = createMemoryBroker();
busScenarios('memory', async ({ onError }) => broker.connect({ onError }));

describe('memory adapter', () => {
  it('memory - delivery happens on a later tick, never inside publish()', async () => {
    const bus = createMemoryBus();
    let delivered = false;
    bus.subscribe('test.async', {}, () => {
      delivered = true;
    });
    bus.publish('test.async', new Uint8Array([1]));
    expect(delivered).toBe(false);
    await waitFor(() => delivered);
    await bus.drain();
  });

  it('memory - buses of different brokers do not see each other', async () => {
    const [one, other] = [createMemoryBus(), createMemoryBus()];
    await one.serve({
      name: 'isolated',
      version: '1.0.0',
      endpoints: [{ name: 'x', subject: 'test.isolated', handle: async () => ({ data: new Uint8Array() }) }],
    });
    await expect(other.request('test.isolated', new Uint8Array(), { timeoutMs: 1_000 })).rejects.toBeInstanceOf(
      NoRespondersError,
    );
    await Promise.all([one.drain(), other.drain()]);
  });

  it('memory - a handler sees a plain Uint8Array, as nats.js hands it, even when a Buffer was sent', async () => {
    const bus = createMemoryBus();
    let received: Uint8Array | undefined;
    bus.subscribe('test.plain', {}, (message) => {
      received = message.data;
    });
    bus.publish('test.plain', Buffer.from('payload'));
    const data = await waitFor(() => received);
    expect(Buffer.isBuffer(data)).toBe(false);
    expect(new TextDecoder().decode(data)).toBe('payload');
    await bus.drain();
  });
});
