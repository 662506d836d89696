import { randomUUID } from 'node:crypto';
import { BusUnavailableError, UnavailableError } from '@hopline/contracts';
import { freePort, startNats, startNatsServer, waitFor } from '@hopline/test-support';
import { connect, nanos, NatsError } from 'nats';
import { afterAll, describe, expect, it, vi } from 'vitest';
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

describe.skipIf(nats.url === undefined)('NATS adapter - the cost of a request', () => {
  it('request - a request that is answered builds no error (nats.js, patched, no longer makes one per reply)', async () => {
    const bus = await connectNatsBus({ url: nats.url ?? '', name: 'request-cost' });
    const subject = `test.${randomUUID().slice(0, 8)}.echo`;
    const responder = await connect({ servers: nats.url ?? '' });
    responder.subscribe(subject, { callback: (_error, message) => message.respond(message.data) });
    await responder.flush();
    const errorsMade = vi.spyOn(NatsError, 'errorForCode');
    try {
      const reply = await bus.request(subject, new Uint8Array([1, 2, 3]), { timeoutMs: 5_000 });
      expect([...reply.data]).toEqual([1, 2, 3]);
      expect(errorsMade).not.toHaveBeenCalled();
    } finally {
      errorsMade.mockRestore();
      await responder.close();
      await bus.drain();
    }
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
// At the file's level, not the describe's: a run filtered to other tests skips a describe's hooks
// and would leave this server running.
afterAll(() => restartable?.[Symbol.asyncDispose]());

describe.skipIf(!restartable)('NATS adapter - losing the server', () => {
  it('connection - a lost server shows as disconnected with the reason, is logged, a request meanwhile fails as the bus being unavailable, and its return is told to who asked', async () => {
    const server = restartable as NonNullable<typeof restartable>;
    const logged: string[] = [];
    const logger = { info: (message: string) => logged.push(message), warn: (message: string) => logged.push(message) };
    const bus = await connectNatsBus({ url: server.url, name: 'outage-test', logger });
    let reconnects = 0;
    const stopWatching = bus.onReconnected(() => (reconnects += 1));
    try {
      expect(bus.connection().connected).toBe(true);
      await server.stop('SIGKILL');
      await waitFor(() => !bus.connection().connected);
      expect(bus.connection().reason).toMatch(/lost the connection/);

      const failure = await bus.request('test.outage', new Uint8Array(), { timeoutMs: 200 }).catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(BusUnavailableError);
      expect((failure as Error).message).toMatch(/no answer within 200 ms; the connection to NATS is down/);

      expect(reconnects).toBe(0);
      await server.start();
      await waitFor(() => bus.connection().connected, { timeoutMs: 15_000 });
      expect(logged).toEqual(['connected to NATS', 'NATS connection lost; reconnecting', 'NATS connection restored']);
      expect(reconnects).toBe(1);
      stopWatching();
    } finally {
      await bus.drain();
    }
  });

  it.each([false, true])(
    'follow - a reader sees every message of its subject once and in order across a kill -9 and restart of the server (shared reading: %s)',
    async (sharedFollow) => {
      const server = restartable as NonNullable<typeof restartable>;
      const connect = (name: string) => connectNatsBus({ url: server.url, name, onError: () => {} });
      const [writer, reader] = [await connect('writer'), await connect('reader')];
      const options = {
        name: `RESTART_FOLLOW_${String(sharedFollow)}`,
        subjects: [`test.restart${String(sharedFollow)}.*.events`],
        sharedFollow,
      };
      const stream = await writer.durableStream(options);
      const subject = `test.restart${String(sharedFollow)}.q1.events`;
      /** Publishes after `last`, retrying while the server is away; resolves with the new last sequence. */
      const publishNext = (value: number, last: number) =>
        waitFor(
          async () =>
            (
              await stream.publish(subject, new TextEncoder().encode(String(value)), {
                msgId: `m-${value}`,
                expectedLastSubjectSeq: last,
              })
            ).seq,
          { timeoutMs: 20_000, intervalMs: 100, description: `message ${value} stored` },
        );
      const stop = new AbortController();
      const seen: string[] = [];
      const reading = (async () => {
        for await (const message of (await reader.durableStream(options)).follow(subject, { signal: stop.signal }))
          seen.push(new TextDecoder().decode(message.data));
      })();
      try {
        let last = 0;
        for (let value = 1; value <= 10; value++) last = await publishNext(value, last);
        await waitFor(() => seen.length === 10);
        await server.stop('SIGKILL');
        await server.start();
        for (let value = 11; value <= 20; value++) last = await publishNext(value, last);
        await waitFor(() => seen.length === 20, { timeoutMs: 20_000, description: 'the messages after the restart' });
        expect(seen).toEqual(Array.from({ length: 20 }, (_, i) => String(i + 1)));
      } finally {
        stop.abort();
        await reading;
        await Promise.all([writer.drain(), reader.drain()]);
      }
    },
  );
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

describe.skipIf(nats.url === undefined)('NATS adapter - a follow after the bus drained', () => {
  it('follow - a follow that joins a shared reading the drain stopped fails at once instead of waiting for good', async () => {
    const id = randomUUID().slice(0, 8);
    const bus = await connectNatsBus({ url: nats.url ?? '', name: 'drained-follow', onError: () => undefined });
    const stream = await bus.durableStream({ name: `DRAINED_${id}`, subjects: [`test.${id}.*`], sharedFollow: true });
    const first = new AbortController();
    for await (const _message of stream.follow(`test.${id}.a`, {
      signal: first.signal,
      onCaughtUp: () => first.abort(),
    }))
      break;
    await bus.drain();
    const reading = (async () => {
      for await (const _message of stream.follow(`test.${id}.b`, { signal: AbortSignal.timeout(3_000) })) break;
    })();
    await expect(reading).rejects.toThrow(/draining/);
  });
});

describe.skipIf(nats.url === undefined)('NATS adapter - a consumer that goes missing', () => {
  it('durable - a consumer deleted while a process pulls from it is made again, and what is stored after reaches the handler', async () => {
    const id = randomUUID().slice(0, 8);
    const bus = await connectNatsBus({ url: nats.url ?? '', name: 'lost-consumer', onError: () => undefined });
    const stream = await bus.durableStream({ name: `LOST_${id}`, subjects: [`test.${id}.>`], workQueue: true });
    const handled: string[] = [];
    const consumer = await stream.consume(
      { durable: `worker-${id}`, filterSubject: `test.${id}.>`, maxDeliver: 3, ackWaitMs: 5_000 },
      async (message) => {
        handled.push(message.subject);
        return { kind: 'ack' };
      },
    );
    const nc = await connect({ servers: nats.url ?? '' });
    try {
      await stream.publish(`test.${id}.before`, new Uint8Array([1]), { msgId: `${id}-before` });
      await waitFor(() => handled.length === 1);
      // An operator deletes it, or a server whose JetStream kept it in memory restarts without it.
      await (await nc.jetstreamManager()).consumers.delete(`LOST_${id}`, `worker-${id}`);
      await stream.publish(`test.${id}.after`, new Uint8Array([2]), { msgId: `${id}-after` });
      await waitFor(() => handled.includes(`test.${id}.after`), {
        timeoutMs: 10_000,
        description: 'the message stored after the deletion',
      });
      expect(handled).toEqual([`test.${id}.before`, `test.${id}.after`]);
    } finally {
      await nc.close();
      await consumer.stop();
      await bus.drain();
    }
  });
});

describe.skipIf(nats.url === undefined)('NATS adapter - follows share one reading of their stream', () => {
  it('follow - a process following many subjects holds one consumer; each follow gets its earlier messages, then its new ones, and no other subject', async () => {
    const id = randomUUID().slice(0, 8);
    const options = { name: `SHARED_${id}`, subjects: [`test.${id}.*.events`], sharedFollow: true };
    const subjectOf = (question: number) => `test.${id}.q${question}.events`;
    const open = (name: string) => connectNatsBus({ url: nats.url ?? '', name, onError: () => {} });
    const [writer, reader] = [await open('writer'), await open('reader')];
    const stream = await writer.durableStream(options);
    const publish = (question: number, value: string) =>
      stream.publish(subjectOf(question), new TextEncoder().encode(value), { msgId: `${question}-${value}` });
    const stop = new AbortController();
    const readerStream = await reader.durableStream(options);
    const seen = new Map<number, string[]>();
    const follow = async (question: number) => {
      const messages: string[] = [];
      seen.set(question, messages);
      for await (const message of readerStream.follow(subjectOf(question), { signal: stop.signal }))
        messages.push(new TextDecoder().decode(message.data));
    };
    const nc = await connect({ servers: nats.url ?? '' });
    try {
      await publish(1, 'before');
      const reading = [1, 2, 3, 4, 5].map(follow);
      for (const question of [1, 2, 3, 4, 5]) await publish(question, 'after');
      await waitFor(() => [...seen.values()].flat().length === 6);
      // A follow joining once the shared reading runs reads what its subject held first.
      await publish(6, 'first');
      const late = follow(6);
      await publish(6, 'second');
      await waitFor(() => seen.get(6)?.length === 2);
      expect(Object.fromEntries(seen)).toEqual({
        1: ['before', 'after'],
        2: ['after'],
        3: ['after'],
        4: ['after'],
        5: ['after'],
        6: ['first', 'second'],
      });
      const jsm = await nc.jetstreamManager();
      expect(await jsm.consumers.list(options.name).next()).toHaveLength(1);
      stop.abort();
      await Promise.all([...reading, late]);
    } finally {
      stop.abort();
      await nc.close();
      await Promise.all([writer.drain(), reader.drain()]);
    }
  });
});

describe.skipIf(nats.url === undefined)('NATS adapter - a shared reading that knows its subjects', () => {
  it.each([true, false])(
    'follow - with a subject index, a follow of a subject the stream never held reads nothing from the server; one it holds (listed as the reading started, or read since) still reads what it held (index: %s)',
    async (subjectIndex) => {
      const id = randomUUID().slice(0, 8);
      const options = { name: `INDEX_${id}`, subjects: [`test.${id}.*.cancel`], sharedFollow: true, subjectIndex };
      const subjectOf = (question: string) => `test.${id}.${question}.cancel`;
      const open = (name: string) => connectNatsBus({ url: nats.url ?? '', name, onError: () => {} });
      const [writer, reader] = [await open('writer'), await open('reader')];
      const stream = await writer.durableStream(options);
      const readerStream = await reader.durableStream(options);
      const publish = (question: string) =>
        stream.publish(subjectOf(question), new TextEncoder().encode(question), { msgId: question });
      // What the reader asks the server for the messages a subject held (a message get each).
      const nc = await connect({ servers: nats.url ?? '' });
      const gets: string[] = [];
      nc.subscribe(`$JS.API.STREAM.MSG.GET.${options.name}`, {
        callback: (_error, message) => gets.push((message.json() as { next_by_subj: string }).next_by_subj),
      });
      await nc.flush();
      const stop = new AbortController();
      /** The messages a new follow of the subject yields before it says it caught up. */
      const heldBefore = (question: string) =>
        new Promise<string[]>((resolve, reject) => {
          const seen: string[] = [];
          const caughtUp = new AbortController();
          const onCaughtUp = () => {
            resolve(seen);
            caughtUp.abort();
          };
          const signal = AbortSignal.any([stop.signal, caughtUp.signal]);
          void (async () => {
            for await (const message of readerStream.follow(subjectOf(question), { signal, onCaughtUp }))
              seen.push(new TextDecoder().decode(message.data));
          })().catch(reject);
        });
      try {
        await publish('listed');
        expect(await heldBefore('listed')).toEqual(['listed']);
        expect(await heldBefore('never')).toEqual([]);
        // Stored while the reading runs: once the reading handed it out, a follow that joins reads it.
        const live = readerStream.follow(subjectOf('later'), { signal: stop.signal })[Symbol.asyncIterator]();
        const delivered = live.next();
        await publish('later');
        await delivered;
        expect(await heldBefore('later')).toEqual(['later']);
        await nc.flush();
        expect(gets.filter((subject) => subject === subjectOf('never'))).toHaveLength(subjectIndex ? 0 : 1);
        expect(gets).toContain(subjectOf('listed'));
        expect(gets).toContain(subjectOf('later'));
      } finally {
        stop.abort();
        await nc.close();
        await Promise.all([writer.drain(), reader.drain()]);
      }
    },
  );

  it('follow - the index forgets a subject once the stream max age has removed its messages: a later follow of it reads nothing from the server', async () => {
    const id = randomUUID().slice(0, 8);
    const jetstream: JetStreamPolicy = {
      ...DEFAULT_JETSTREAM_POLICY,
      limits: { ...DEFAULT_JETSTREAM_POLICY.limits, events: { maxAgeMs: 1_000, maxBytes: 1024 ** 2 } },
    };
    const options = {
      name: `AGED_${id}`,
      subjects: [`test.${id}.*.cancel`],
      sharedFollow: true,
      subjectIndex: true,
      retention: 'events' as const,
      duplicateWindowMs: 500,
    };
    const subjectOf = (question: string) => `test.${id}.${question}.cancel`;
    const open = (name: string) => connectNatsBus({ url: nats.url ?? '', name, onError: () => {}, jetstream });
    const [writer, reader] = [await open('writer'), await open('reader')];
    const stream = await writer.durableStream(options);
    const readerStream = await reader.durableStream(options);
    const nc = await connect({ servers: nats.url ?? '' });
    const gets: string[] = [];
    nc.subscribe(`$JS.API.STREAM.MSG.GET.${options.name}`, {
      callback: (_error, message) => gets.push((message.json() as { next_by_subj?: string }).next_by_subj ?? ''),
    });
    await nc.flush();
    const stop = new AbortController();
    /** Publishes to the subject and waits until the reader's shared reading handed the message out. */
    const publishRead = async (question: string) => {
      const live = readerStream.follow(subjectOf(question), { signal: stop.signal })[Symbol.asyncIterator]();
      const delivered = live.next();
      await stream.publish(subjectOf(question), new TextEncoder().encode(question), { msgId: question });
      await delivered;
    };
    try {
      await publishRead('aged');
      // The reading noted the subject before the message reached the follow, so by this moment.
      const seenBy = Date.now();
      await waitFor(async () => (await stream.last(subjectOf('aged'))) === undefined, {
        timeoutMs: 10_000,
        description: 'the max age to remove the message',
      });
      // The server may remove the message a little before the max age has passed on the
      // reading's clock, which counts from when it saw it: wait that out too.
      await new Promise((resolve) =>
        setTimeout(resolve, Math.max(0, seenBy + jetstream.limits.events.maxAgeMs - Date.now()) + 50),
      );
      // The reading forgets what it saw longer ago than the max age as it reads the next message.
      await publishRead('fresh');
      // Only the later follow's reads count: a reading that started after the first publish
      // (a loaded machine) read that message stored, with a get.
      gets.length = 0;
      await new Promise<void>((resolve, reject) => {
        void (async () => {
          for await (const _ of readerStream.follow(subjectOf('aged'), { signal: stop.signal, onCaughtUp: resolve }));
        })().catch(reject);
      });
      await nc.flush();
      expect(gets.filter((subject) => subject === subjectOf('aged'))).toEqual([]);
    } finally {
      stop.abort();
      await nc.close();
      await Promise.all([writer.drain(), reader.drain()]);
    }
  });
});

describe.skipIf(nats.url === undefined)('NATS adapter - a follow whose consumer is lost', () => {
  it.each([false, true])(
    'follow - a reader whose consumer vanished from the server (its node lost) resumes after its last message within seconds, without a gap (shared reading: %s)',
    async (sharedFollow) => {
      const id = randomUUID().slice(0, 8);
      const options = { name: `LOST_${id}`, subjects: [`test.${id}.*.events`], sharedFollow };
      const subject = `test.${id}.q1.events`;
      const open = (name: string) => connectNatsBus({ url: nats.url ?? '', name, onError: () => {} });
      const [writer, reader] = [await open('writer'), await open('reader')];
      const stream = await writer.durableStream(options);
      const publish = (value: number) =>
        stream.publish(subject, new TextEncoder().encode(String(value)), { msgId: `m-${value}` });
      const stop = new AbortController();
      const seen: string[] = [];
      const reading = (async () => {
        for await (const message of (await reader.durableStream(options)).follow(subject, { signal: stop.signal }))
          seen.push(new TextDecoder().decode(message.data));
      })();
      const nc = await connect({ servers: nats.url ?? '' });
      try {
        for (let value = 1; value <= 5; value++) await publish(value);
        await waitFor(() => seen.length === 5);
        // What a node's loss does to the reader's consumer, which lives on that one node.
        const jsm = await nc.jetstreamManager();
        const followers = await jsm.consumers.list(options.name).next();
        expect(followers).toHaveLength(1);
        await jsm.consumers.delete(options.name, followers[0]?.name ?? '');
        for (let value = 6; value <= 10; value++) await publish(value);
        await waitFor(() => seen.length === 10, { timeoutMs: 8_000, description: 'the messages after the loss' });
        expect(seen).toEqual(Array.from({ length: 10 }, (_, i) => String(i + 1)));
      } finally {
        stop.abort();
        await reading;
        await nc.close();
        await Promise.all([writer.drain(), reader.drain()]);
      }
    },
  );
});
