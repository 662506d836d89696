import { setTimeout as sleep } from 'node:timers/promises';
import { createMemoryBroker, type Settlement } from '@hopline/bus';
import { codecs } from '@hopline/contracts';
import { openQuestionStreams, type QuestionLog, type QuestionWriter } from '@hopline/questions';
import { describe, expect, it } from 'vitest';
import { FakeReasoner, twoHopScript, type Script } from './support/fake-reasoner.js';
import { askSse, bearer, openSse, startGatewayOn, testKeys } from './support/harness.js';

/** A question log whose reads deliver nothing and never end, as a read stalled by a failover does. */
function stallingReads(log: QuestionLog): QuestionLog {
  return Object.assign(Object.create(log) as QuestionLog, {
    // eslint-disable-next-line require-yield -- a read that never yields is the point
    async *follow(_questionId: string, _afterSeq: number, signal: AbortSignal) {
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    },
  });
}

describe('answer-gateway: a question log whose reads stall', () => {
  it('still ends the stream after the deadline with the end the log holds, instead of leaving it open', async () => {
    const broker = createMemoryBroker();
    const bus = broker.connect();
    const peerBus = broker.connect();
    const keys = testKeys();
    const reasoner = await FakeReasoner.start(peerBus, twoHopScript());
    const streams = await openQuestionStreams(bus);
    const { gateway, baseUrl } = await startGatewayOn(bus, keys, {
      config: { QUESTION_TIMEOUT_MS: 1_000 },
      questions: { ...streams, log: stallingReads(streams.log) },
    });
    try {
      const stream = await askSse(baseUrl, keys.alice, { question: 'Who owns Atlas?', kbIds: ['handbook'] });
      expect(stream.response.status).toBe(200);
      await stream.ended;
      // The hop-reasoner's own done is in the log: the reader gets that, not a gateway-made error.
      expect(stream.events.map((event) => event.name)).toEqual(['done']);
    } finally {
      reasoner.releaseAll();
      await gateway.stop({ graceMs: 0 });
      await reasoner.stop();
      await bus.drain();
      await peerBus.drain();
    }
  }, 20_000);
});

describe('answer-gateway: a question whose hop-reasoner is gone', () => {
  it('ends the stream after the deadline with an end of its own when no hop-reasoner writes the one it asked for, and writes nothing into the log', async () => {
    const broker = createMemoryBroker();
    const bus = broker.connect();
    const keys = testKeys();
    // A hop-reasoner that took the question, wrote two events and stopped answering anything.
    const { queue, log, ends } = await openQuestionStreams(broker.connect());
    const taken = await queue.take({ capacity: 1, leaseMs: 60_000 }, async (job) => {
      const ctx = codecs.askCommand.decode(job.data).ctx;
      const meta = {
        tenantId: ctx?.scope?.tenantId ?? '',
        userId: ctx?.scope?.userId ?? '',
        kbIds: ctx?.scope?.kbIds ?? [],
        deadlineUnixMs: 0,
      };
      const writer = log.writer(ctx?.questionId ?? '', meta, 1);
      await writer.append({ event: 'accepted', accepted: {} }, 0);
      await writer.append({ event: 'route', route: { route: 'SINGLE' } }, 0);
      return new Promise<Settlement>(() => {});
    });
    const { gateway, baseUrl } = await startGatewayOn(bus, keys, { config: { QUESTION_TIMEOUT_MS: 500 } });
    try {
      const stream = await askSse(baseUrl, keys.alice, { question: 'Who owns Atlas?' });
      expect(stream.response.status).toBe(200);
      const questionId = stream.response.headers.get('hopline-question-id') ?? '';
      await stream.ended;
      expect(stream.events.map((event) => `${event.id}:${event.name}`)).toEqual(['1:accepted', '2:route', '3:error']);
      expect(stream.events.at(-1)?.data).toMatchObject({ code: 'deadline_exceeded' });
      expect(await ends.requested(questionId)).toBe('deadline');
      expect((await log.head(questionId))?.event.seq).toBe(2);
    } finally {
      await gateway.stop({ graceMs: 0 });
      void taken.stop();
      await bus.drain();
    }
  }, 20_000);
});

/** A question log whose reads take `delayMs` per event: a reader that is slow to take them. */
function slowReads(log: QuestionLog, delayMs: number): QuestionLog {
  return Object.assign(Object.create(log) as QuestionLog, {
    async *follow(questionId: string, afterSeq: number, signal: AbortSignal, options?: { onlyNew?: boolean }) {
      for await (const event of log.follow(questionId, afterSeq, signal, options)) {
        await sleep(delayMs);
        yield event;
      }
    },
  });
}

/** A hop-reasoner that took the question, wrote `accepted` and a route, and then answers nothing. */
async function silentReasoner(broker: ReturnType<typeof createMemoryBroker>) {
  const streams = await openQuestionStreams(broker.connect());
  let writer: QuestionWriter | undefined;
  const taken = await streams.queue.take({ capacity: 1, leaseMs: 60_000 }, async (job) => {
    const ctx = codecs.askCommand.decode(job.data).ctx;
    const meta = {
      tenantId: ctx?.scope?.tenantId ?? '',
      userId: ctx?.scope?.userId ?? '',
      kbIds: ctx?.scope?.kbIds ?? [],
      deadlineUnixMs: ctx?.deadlineUnixMs ?? 0,
    };
    writer = streams.log.writer(ctx?.questionId ?? '', meta, 1);
    await writer.append({ event: 'accepted', accepted: {} }, 0);
    await writer.append({ event: 'route', route: { route: 'SINGLE' } }, 0);
    return new Promise<Settlement>(() => {});
  });
  return { taken, writer: () => writer };
}

describe('answer-gateway: the end a gateway makes itself', () => {
  it('a resume through another replica past the deadline, read slower than END_DELIVERY_MS, still gets every event and the end', async () => {
    const broker = createMemoryBroker();
    const keys = testKeys();
    const quickAnswer: Script = async (q) => {
      q.emit({ event: 'route', route: { route: 'SINGLE' } });
      for (let i = 0; i < 6; i++) q.emit({ event: 'token', token: { text: `t${i} ` } });
      q.emit({ event: 'done', done: { answer: 'finished', stopReason: 'SUFFICIENT' } });
    };
    const reasoner = await FakeReasoner.start(broker.connect(), quickAnswer);
    const a = await startGatewayOn(broker.connect(), keys, {
      config: { QUESTION_TIMEOUT_MS: 400, RESUME_GRACE_MS: 20_000 },
    });
    const busB = broker.connect();
    const streamsB = await openQuestionStreams(busB);
    const b = await startGatewayOn(busB, keys, {
      config: { RESUME_GRACE_MS: 20_000 },
      questions: { ...streamsB, log: slowReads(streamsB.log, 600) },
    });
    try {
      const asked = await askSse(a.baseUrl, keys.alice, { question: 'Who owns Atlas?' });
      await asked.ended;
      const questionId = asked.response.headers.get('hopline-question-id') ?? '';
      expect(asked.events.at(-1)?.name).toBe('done');
      await sleep(1_600);
      const resumed = await openSse(`${b.baseUrl}/v1/questions/${questionId}/events`, {
        headers: { ...bearer(keys.alice), 'Last-Event-ID': '0' },
      });
      expect(resumed.response.status).toBe(200);
      await resumed.ended;
      expect(resumed.events.map((event) => event.id)).toEqual(asked.events.map((event) => event.id));
      expect(resumed.events.at(-1)?.name).toBe('done');
    } finally {
      await a.gateway.stop({ graceMs: 0 });
      await b.gateway.stop({ graceMs: 0 });
      await reasoner.stop();
    }
  }, 30_000);

  it('a cancel through a replica that did not accept the question, no hop-reasoner left, ends the readers of both replicas as cancelled within END_DELIVERY_MS, and frees the accepting one’s slot', async () => {
    const broker = createMemoryBroker();
    const keys = testKeys();
    const { taken } = await silentReasoner(broker);
    const config = { QUESTION_TIMEOUT_MS: 12_000, RESUME_GRACE_MS: 20_000 };
    const a = await startGatewayOn(broker.connect(), keys, { config });
    const b = await startGatewayOn(broker.connect(), keys, { config });
    try {
      const asked = await askSse(a.baseUrl, keys.alice, { question: 'Who owns Atlas?' });
      const questionId = asked.response.headers.get('hopline-question-id') ?? '';
      while (asked.events.length < 2) await sleep(20);
      expect(a.gateway.health().details.inFlight).toBe(1);
      const resumed = await openSse(`${b.baseUrl}/v1/questions/${questionId}/events`, {
        headers: { ...bearer(keys.alice), 'Last-Event-ID': '2' },
      });
      expect(resumed.response.status).toBe(200);
      const cancel = await fetch(`${b.baseUrl}/v1/questions/${questionId}`, {
        method: 'DELETE',
        headers: bearer(keys.alice),
      });
      expect(await cancel.json()).toEqual({ questionId, cancelled: true });
      const cancelledAt = Date.now();
      // The reader on the replica that took the cancel, and the asker still on the accepting one.
      const ended = await Promise.race([
        Promise.all([resumed.ended, asked.ended]).then(() => true),
        sleep(8_000).then(() => false),
      ]);
      expect({ ended, within: Date.now() - cancelledAt < 8_000 }).toEqual({ ended: true, within: true });
      for (const stream of [resumed, asked])
        expect(stream.events.at(-1)).toMatchObject({ id: 3, name: 'error', data: { code: 'cancelled' } });
      expect(a.gateway.health().details.inFlight).toBe(0);
      // That end is in no log: a client that had it and resumes after it hears the stream ended.
      for (const replica of [b, a]) {
        const after = await openSse(`${replica.baseUrl}/v1/questions/${questionId}/events`, {
          headers: { ...bearer(keys.alice), 'Last-Event-ID': '3' },
        });
        expect(after.response.status).toBe(410);
        await after.ended;
      }
    } finally {
      await a.gateway.stop({ graceMs: 0 });
      await b.gateway.stop({ graceMs: 0 });
      void taken.stop();
    }
  }, 40_000);

  it('an event that arrives while the gateway reads the log for its overdue end goes before that end, which still ends the stream', async () => {
    const broker = createMemoryBroker();
    const keys = testKeys();
    const reasoner = await silentReasoner(broker);
    const bus = broker.connect();
    const streams = await openQuestionStreams(bus);
    let heads = 0;
    const log: QuestionLog = Object.assign(Object.create(streams.log) as QuestionLog, {
      async head(questionId: string) {
        heads += 1;
        // The last hop-reasoner's in-flight token lands while the head is read; then it is gone.
        await reasoner.writer()?.append({ event: 'token', token: { text: 'late ' } }, 0);
        await sleep(50);
        return streams.log.head(questionId);
      },
    });
    const { gateway, baseUrl } = await startGatewayOn(bus, keys, {
      config: { QUESTION_TIMEOUT_MS: 500 },
      questions: { ...streams, log },
    });
    try {
      const stream = await askSse(baseUrl, keys.alice, { question: 'Who owns Atlas?' });
      expect(stream.response.status).toBe(200);
      const ended = await Promise.race([stream.ended.then(() => true), sleep(10_000).then(() => false)]);
      expect(ended).toBe(true);
      expect(heads).toBe(1);
      expect(stream.events.map((event) => `${event.id}:${event.name}`)).toEqual([
        '1:accepted',
        '2:route',
        '3:token',
        '4:error',
      ]);
      expect(gateway.health().details).toMatchObject({ inFlight: 0 });
    } finally {
      await gateway.stop({ graceMs: 0 });
      void reasoner.taken.stop();
    }
  }, 30_000);
});
