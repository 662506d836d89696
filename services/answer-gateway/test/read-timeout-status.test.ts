import { randomUUID } from 'node:crypto';
import { createMemoryBroker } from '@hopline/bus';
import { DeadlineExceededError } from '@hopline/contracts';
import { openQuestionStreams } from '@hopline/questions';
import { describe, expect, it } from 'vitest';
import { bearer, startGatewayOn, testKeys } from './support/harness.js';

// A read of the question log that times out (JetStream busy, a leader election) says nothing of
// the question: it is the bus's failure, 503 with Retry-After, not the question's `timeout`.
describe('answer-gateway - a timed-out read of a question log is not "the question ran out of time"', () => {
  it('read timeout - resume and trace answer 503 with Retry-After when the log read times out', async () => {
    const broker = createMemoryBroker();
    const bus = broker.connect();
    const keys = testKeys();
    const questions = await openQuestionStreams(bus);
    questions.log.head = () => Promise.reject(new DeadlineExceededError('JetStream API request timed out'));
    const { gateway, baseUrl } = await startGatewayOn(bus, keys, { questions });
    try {
      const id = randomUUID();
      for (const path of [`/v1/questions/${id}/events`, `/v1/questions/${id}/trace`]) {
        const response = await fetch(`${baseUrl}${path}`, { headers: bearer(keys.alice) });
        const body = (await response.json()) as { type: string };
        expect({
          path,
          status: response.status,
          type: body.type,
          retryAfter: response.headers.get('retry-after'),
        }).toEqual({
          path,
          status: 503,
          type: 'urn:hopline:problem:unavailable',
          retryAfter: expect.any(String),
        });
      }
    } finally {
      await gateway.stop({ graceMs: 0 });
      await bus.drain();
    }
  });
});
