import { NoRespondersError } from '@hopline/contracts';
import { waitFor } from '@hopline/test-support';
import { describe, expect, it } from 'vitest';
import { createMemoryBroker, createMemoryBus, DEFAULT_JETSTREAM_POLICY, type StoredMessage } from '../src/index.js';
import { encodeHeaders } from '../src/wire-headers.js';
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

  it("memory - a durable stream keeps its retention class's limits: the oldest go first beyond the bytes or the age", async () => {
    const limits = { events: { maxAgeMs: 200, maxBytes: 10_000 } };
    const bus = createMemoryBus({
      jetstream: { ...DEFAULT_JETSTREAM_POLICY, limits: { ...DEFAULT_JETSTREAM_POLICY.limits, ...limits } },
    });
    const options = { name: 'RETENTION', subjects: ['test.retention.>'], retention: 'events' as const };
    const stream = await bus.durableStream(options);
    const kept = await bus.durableStream({ ...options, name: 'KEPT', subjects: ['test.kept.>'], retention: 'keep' });
    const stored = async (of: typeof stream, subject: string) => {
      const seen: number[] = [];
      const stop = new AbortController();
      const reading = (async () => {
        for await (const message of of.follow(subject, { signal: stop.signal })) seen.push(message.data[0] as number);
      })();
      await waitFor(async () => seen.at(-1) === (await of.last(subject))?.data[0]);
      stop.abort();
      await reading;
      return seen;
    };
    // 1,000 bytes each: at most ten fit in 10,000 bytes, with their subjects and headers nine.
    for (let i = 0; i < 50; i++) {
      await stream.publish('test.retention.q', new Uint8Array(1_000).fill(i), { msgId: `r${i}` });
      await kept.publish('test.kept.q', new Uint8Array(1_000).fill(i), { msgId: `k${i}` });
    }
    expect(await stored(stream, 'test.retention.q')).toEqual([41, 42, 43, 44, 45, 46, 47, 48, 49]);
    expect(await stored(kept, 'test.kept.q')).toHaveLength(50);

    // Past the age, the next publish drops what is older.
    await new Promise((resolve) => setTimeout(resolve, 250));
    await stream.publish('test.retention.q', new Uint8Array([99]), { msgId: 'late' });
    expect(await stored(stream, 'test.retention.q')).toEqual([99]);
    await bus.drain();
  });

  it('memory - a stored message counts its headers as the bytes their NATS wire encoding takes', async () => {
    const subject = 'test.sized.q';
    const headers = { 'Hopline-Tenant': 'tenant-ä', 'Hopline-User': '  trimmed  ' };
    // The message id is a header too; ids of one length make every message one size.
    const size = subject.length + 100 + encodeHeaders({ ...headers, 'Nats-Msg-Id': 'm0' }).length;
    const keptWithin = async (maxBytes: number) => {
      const bus = createMemoryBus({
        jetstream: {
          ...DEFAULT_JETSTREAM_POLICY,
          limits: { ...DEFAULT_JETSTREAM_POLICY.limits, events: { maxAgeMs: 0, maxBytes } },
        },
      });
      const stream = await bus.durableStream({ name: 'SIZED', subjects: ['test.sized.>'], retention: 'events' });
      for (let i = 0; i < 5; i++) await stream.publish(subject, new Uint8Array(100), { msgId: `m${i}`, headers });
      const seen: StoredMessage[] = [];
      const stop = new AbortController();
      const reading = (async () => {
        for await (const message of stream.follow(subject, { signal: stop.signal })) seen.push(message);
      })();
      await waitFor(() => seen.at(-1)?.headers['Nats-Msg-Id'] === 'm4');
      stop.abort();
      await reading;
      await bus.drain();
      return seen;
    };
    const three = await keptWithin(3 * size);
    expect(three.map((message) => message.headers['Nats-Msg-Id'])).toEqual(['m2', 'm3', 'm4']);
    // Values come back as NATS hands them: trimmed.
    expect(three[0]?.headers['Hopline-User']).toBe('trimmed');
    expect(await keptWithin(3 * size - 1)).toHaveLength(2);
  });

  it('memory - a message larger than the stream may hold is dropped at once and leaves nothing behind: the subject is still read and written in order', async () => {
    const bus = createMemoryBus({
      jetstream: {
        ...DEFAULT_JETSTREAM_POLICY,
        limits: { ...DEFAULT_JETSTREAM_POLICY.limits, events: { maxAgeMs: 0, maxBytes: 500 } },
      },
    });
    const stream = await bus.durableStream({ name: 'TOO_BIG', subjects: ['test.big.>'], retention: 'events' });
    const subject = 'test.big.q';
    await stream.publish(subject, new Uint8Array(10), { msgId: 'small' });
    await stream.publish(subject, new Uint8Array(1_000), { msgId: 'big' });
    // The big one took the small one with it; neither is read, and nothing breaks a read.
    expect(await stream.last(subject)).toBeUndefined();
    const { seq } = await stream.publish(subject, new Uint8Array(10), { msgId: 'next', expectedLastSubjectSeq: 0 });
    expect((await stream.last(subject))?.seq).toBe(seq);
    const read: number[] = [];
    const stop = new AbortController();
    for await (const message of stream.follow(subject, { signal: stop.signal, onCaughtUp: () => stop.abort() }))
      read.push(message.seq);
    expect(read).toEqual([seq]);
    await bus.drain();
  });

  it('memory - a value payload is handed to readers as its value, never encoded, and counts the bytes it would take', async () => {
    const subject = 'test.valued.q';
    const size = subject.length + 100 + encodeHeaders({ 'Nats-Msg-Id': 'm0' }).length;
    const bus = createMemoryBus({
      jetstream: {
        ...DEFAULT_JETSTREAM_POLICY,
        limits: { ...DEFAULT_JETSTREAM_POLICY.limits, events: { maxAgeMs: 0, maxBytes: 3 * size } },
      },
    });
    const stream = await bus.durableStream({ name: 'VALUED', subjects: ['test.valued.>'], retention: 'events' });
    let encoded = 0;
    for (let i = 0; i < 5; i++) {
      const payload = {
        encode: () => {
          encoded++;
          return new Uint8Array(100);
        },
        decoded: () => ({ value: { index: i }, byteLength: 100 }),
      };
      await stream.publish(subject, payload, { msgId: `m${i}` });
    }
    const seen: StoredMessage[] = [];
    const stop = new AbortController();
    const reading = (async () => {
      for await (const message of stream.follow(subject, { signal: stop.signal })) seen.push(message);
    })();
    await waitFor(() => seen.length === 3);
    stop.abort();
    await reading;
    // Within the limit as three messages of 100 bytes are: the oldest two went.
    expect(seen.map((message) => message.value)).toEqual([{ index: 2 }, { index: 3 }, { index: 4 }]);
    expect((await stream.last(subject))?.value).toEqual({ index: 4 });
    expect(encoded).toBe(0);
    // A reader that asks for the bytes gets them.
    expect(seen[0]?.data).toHaveLength(100);
    expect(encoded).toBe(1);
    await bus.drain();
  });

  it('memory - a value payload that cannot be built is refused before it takes a sequence: no gap follows', async () => {
    const bus = createMemoryBus();
    const stream = await bus.durableStream({ name: 'REFUSED', subjects: ['test.refused.>'], retention: 'events' });
    const broken = {
      encode: () => new Uint8Array(1),
      decoded: () => {
        throw new Error('no such event');
      },
    };
    await expect(stream.publish('test.refused.q', broken, { msgId: 'bad' })).rejects.toThrow('no such event');
    const { seq } = await stream.publish('test.refused.q', new Uint8Array([1]), { msgId: 'good' });
    expect(seq).toBe(1);
    await bus.drain();
  });
});
