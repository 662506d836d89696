import { createMemoryBroker, type Settlement } from '@hopline/bus';
import { codecs } from '@hopline/contracts';
import { openQuestionStreams, type QuestionLog } from '@hopline/questions';
import { describe, expect, it } from 'vitest';
import { FakeReasoner, twoHopScript } from './support/fake-reasoner.js';
import { askSse, startGatewayOn, testKeys } from './support/harness.js';

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
