import { randomUUID } from 'node:crypto';
import { BusUnavailableError, UnavailableError } from '@hopline/contracts';
import { freePort, startNats, startNatsServer, waitFor } from '@hopline/test-support';
import { connect, nanos } from 'nats';
import { afterAll, describe, expect, it } from 'vitest';
import { connectNatsBus, DEFAULT_JETSTREAM_POLICY, type JetStreamPolicy } from '../src/index.js';
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

describe.skipIf(nats.url === undefined)('NATS adapter - JetStream policy', () => {
  const MIB = 1024 ** 2;
  const policy = (hours: number, bytes: number, replicas = 1): JetStreamPolicy => ({
    replicas,
    storage: 'file',
    limits: {
      ...DEFAULT_JETSTREAM_POLICY.limits,
      'dead-letters': { maxAgeMs: hours * 3_600_000, maxBytes: bytes },
      traces: { maxAgeMs: 2 * hours * 3_600_000, maxBytes: 2 * bytes },
    },
  });
  const streamConfig = async (name: string) => {
    const nc = await connect({ servers: nats.url ?? '' });
    try {
      return (await (await nc.jetstreamManager()).streams.info(name)).config;
    } finally {
      await nc.close();
    }
  };

  it("policy - streams and buckets are created with the policy's replicas, storage and limits, and updated when it changes", async () => {
    const id = randomUUID().slice(0, 8);
    const names = { deadLetters: `DL_${id}`, kept: `KEPT_${id}`, bucket: `traces_${id}` };
    const open = async (jetstream: JetStreamPolicy) => {
      const bus = await connectNatsBus({ url: nats.url ?? '', name: 'policy-test', jetstream });
      await bus.durableStream({ name: names.deadLetters, subjects: [`test.${id}.dead`], retention: 'dead-letters' });
      await bus.durableStream({ name: names.kept, subjects: [`test.${id}.kept`] });
      await bus.keyValue({ bucket: names.bucket });
      await bus.drain();
    };

    await open(policy(1, MIB));
    expect(await streamConfig(names.deadLetters)).toMatchObject({
      num_replicas: 1,
      storage: 'file',
      max_age: nanos(3_600_000),
      max_bytes: MIB,
    });
    expect(await streamConfig(`KV_${names.bucket}`)).toMatchObject({ max_age: nanos(7_200_000), max_bytes: 2 * MIB });
    // The ingest stream is what new workers build their index from: nothing ages out of it.
    expect(await streamConfig(names.kept)).toMatchObject({ max_age: 0, max_bytes: -1 });

    await open(policy(5, 4 * MIB));
    expect(await streamConfig(names.deadLetters)).toMatchObject({ max_age: nanos(5 * 3_600_000), max_bytes: 4 * MIB });
    expect(await streamConfig(`KV_${names.bucket}`)).toMatchObject({
      max_age: nanos(10 * 3_600_000),
      max_bytes: 8 * MIB,
    });
  });

  it('policy - more replicas than a single server can hold fail at start-up, naming the stream', async () => {
    const bus = await connectNatsBus({ url: nats.url ?? '', name: 'policy-test', jetstream: policy(1, MIB, 3) });
    const name = `R3_${randomUUID().slice(0, 8)}`;
    await expect(bus.durableStream({ name, subjects: [`test.${name}.x`] })).rejects.toThrow(
      new RegExp(`create stream ${name}: .*replicas`),
    );
    await bus.drain();
  });
});

const restartable = await startNatsServer();

describe.skipIf(!restartable)('NATS adapter - losing the server', () => {
  afterAll(async () => {
    await restartable?.[Symbol.asyncDispose]();
  });

  it('connection - a lost server shows as disconnected with the reason, is logged, and a request meanwhile fails as the bus being unavailable', async () => {
    const server = restartable as NonNullable<typeof restartable>;
    const logged: string[] = [];
    const logger = { info: (message: string) => logged.push(message), warn: (message: string) => logged.push(message) };
    const bus = await connectNatsBus({ url: server.url, name: 'outage-test', logger });
    try {
      expect(bus.connection().connected).toBe(true);
      await server.stop('SIGKILL');
      await waitFor(() => !bus.connection().connected);
      expect(bus.connection().reason).toMatch(/lost the connection/);

      const failure = await bus.request('test.outage', new Uint8Array(), { timeoutMs: 200 }).catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(BusUnavailableError);
      expect((failure as Error).message).toMatch(/no answer within 200 ms; the connection to NATS is down/);

      await server.start();
      await waitFor(() => bus.connection().connected, { timeoutMs: 15_000 });
      expect(logged).toEqual(['connected to NATS', 'NATS connection lost; reconnecting', 'NATS connection restored']);
    } finally {
      await bus.drain();
    }
  });
});

describe.skipIf(nats.url === undefined)('NATS adapter - durable consumers that are gone', () => {
  it('durable - a consumer with an inactive threshold is deleted by the server once no client has used it for that long', async () => {
    const id = randomUUID().slice(0, 8);
    const bus = await connectNatsBus({ url: nats.url ?? '', name: 'inactive-test' });
    const stream = await bus.durableStream({ name: `GONE_${id}`, subjects: [`test.${id}.>`] });
    const consumer = await stream.consume(
      {
        durable: `worker-${id}`,
        filterSubject: `test.${id}.>`,
        maxDeliver: 3,
        ackWaitMs: 5_000,
        inactiveThresholdMs: 500,
      },
      async () => ({ kind: 'ack' }),
    );
    await consumer.stop();
    const nc = await connect({ servers: nats.url ?? '' });
    try {
      const jsm = await nc.jetstreamManager();
      await waitFor(
        async () => (await jsm.consumers.list(`GONE_${id}`).next()).every((info) => info.name !== `worker-${id}`),
        { timeoutMs: 10_000, description: 'the abandoned consumer to expire' },
      );
    } finally {
      await nc.close();
      await bus.drain();
    }
  });
});
