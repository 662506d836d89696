import { describe, expect, it } from 'vitest';
import { problemFromErrorEvent } from '../src/problem.js';

describe('answer-gateway - a question that ended in an error, as a JSON client gets it', () => {
  it('problem - an end the event calls retryable is a 503 with Retry-After; one it does not is a 503 without', () => {
    const retryable = problemFromErrorEvent({
      code: 'unavailable',
      message: 'the gateway is shutting down',
      retryable: true,
    });
    expect(retryable).toMatchObject({ status: 503, headers: { 'Retry-After': '1' } });
    const final = problemFromErrorEvent({ code: 'unavailable', message: 'the reranker is down', retryable: false });
    expect(final.status).toBe(503);
    expect(final.headers['Retry-After']).toBeUndefined();
    expect(problemFromErrorEvent({ code: 'deadline_exceeded', message: 'late', retryable: true }).status).toBe(504);
  });
});
