import { createMemoryBroker } from '@hopline/bus';
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
