import { randomUUID } from 'node:crypto';
import { createMemoryBroker } from '@hopline/bus';
import { codecs, subjects } from '@hopline/contracts';
import { describe, expect, it } from 'vitest';
import { endError, isEndFor, QuestionEnds, questionEndsStream } from '../src/index.js';

const inAMoment = () => Date.now() + 2_000;

async function openEnds() {
  const bus = createMemoryBroker().connect();
  const requests = await bus.durableStream(questionEndsStream);
  return { requests, ends: new QuestionEnds(requests) };
}

describe('question ends', () => {
  it('question ends - a request is kept for whoever takes the question later, and the first one stays the one that counts', async () => {
    const { ends } = await openEnds();
    const questionId = randomUUID();
    expect(await ends.requested(questionId)).toBeUndefined();
    await ends.request(questionId, 'client_request', inAMoment());
    await ends.request(questionId, 'deadline', inAMoment());
    expect(await ends.requested(questionId)).toBe('client_request');
    expect(await ends.requested(randomUUID())).toBeUndefined();
  });

  it('question ends - follow yields the request stored before it started, then one that comes later', async () => {
    const { ends } = await openEnds();
    const [early, late] = [randomUUID(), randomUUID()];
    await ends.request(early, 'client_gone', inAMoment());
    const first = async (questionId: string) => {
      for await (const reason of ends.follow(questionId, AbortSignal.timeout(5_000))) return reason;
      return undefined;
    };
    expect(await first(early)).toBe('client_gone');
    const waiting = first(late);
    await ends.request(late, 'shutdown', inAMoment());
    expect(await waiting).toBe('shutdown');
  });

  it('question ends - a request that does not decode, or names an unknown reason, still ends the question as a cancel', async () => {
    const { requests, ends } = await openEnds();
    const [garbled, newer] = [randomUUID(), randomUUID()];
    await requests.publish(subjects.cancel(garbled), Uint8Array.from([0xff, 0x01]), { msgId: garbled });
    await requests.publish(
      subjects.cancel(newer),
      codecs.cancelCommand.encode({ questionId: newer, reason: 'from_the_future' }),
      { msgId: newer },
    );
    expect(endError((await ends.requested(garbled)) ?? '').code).toBe('cancelled');
    expect(endError((await ends.requested(newer)) ?? '')).toMatchObject({
      code: 'cancelled',
      message: expect.stringContaining('from_the_future'),
    });
  });

  it('question ends - each reason has its terminal error, which isEndFor tells apart from a question’s own errors', () => {
    expect(endError('deadline')).toMatchObject({ code: 'deadline_exceeded', retryable: true });
    expect(endError('client_request')).toMatchObject({ code: 'cancelled', retryable: false });
    expect(endError('not_taken')).toMatchObject({ code: 'unavailable', retryable: true });
    expect(isEndFor(endError('shutdown'), 'shutdown')).toBe(true);
    expect(isEndFor(endError('shutdown'), 'not_taken')).toBe(false);
    expect(isEndFor({ code: 'unavailable', message: 'retrieval failed', retryable: true }, 'shutdown')).toBe(false);
  });
});
