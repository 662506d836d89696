import { ErrorCode, NatsError } from 'nats';
import { describe, expect, it } from 'vitest';
import { fromJetStreamError, fromNatsError } from '../src/nats-errors.js';

const context = { operation: 'stream publish', subject: 'hopline.events.q1', timeoutMs: 5_000 };

describe('JetStream errors', () => {
  it('jetstream errors - no responders on a stream subject (no leader while one is elected) is unavailable, which callers retry', () => {
    const failure = fromJetStreamError(NatsError.errorForCode(ErrorCode.NoResponders), context);
    expect(failure).toMatchObject({ code: 'unavailable', retryable: true });
    expect(failure.message).toContain('stream publish hopline.events.q1: JetStream unavailable');
  });

  it('jetstream errors - the API answering 503 (JetStream temporarily unavailable) is unavailable', () => {
    const error = new NatsError('JetStream system temporarily unavailable', '503');
    error.api_error = { code: 503, err_code: 10008, description: 'JetStream system temporarily unavailable' };
    expect(fromJetStreamError(error, { operation: 'stream get', subject: 'hopline.events.q1' })).toMatchObject({
      code: 'unavailable',
      message: 'stream get hopline.events.q1: JetStream unavailable: JetStream system temporarily unavailable',
    });
  });

  it('jetstream errors - a timeout and a wrong last sequence keep their own meaning', () => {
    expect(fromJetStreamError(NatsError.errorForCode(ErrorCode.Timeout), context)).toMatchObject({
      code: 'deadline_exceeded',
    });
    const conflict = new NatsError('wrong last sequence: 3', '400');
    conflict.api_error = { code: 400, err_code: 10071, description: 'wrong last sequence: 3' };
    expect(fromJetStreamError(conflict, context)).toMatchObject({ code: 'conflict' });
  });

  it('jetstream errors - a core request without responders is still no_responders: no service listens', () => {
    const failure = fromNatsError(NatsError.errorForCode(ErrorCode.NoResponders), {
      operation: 'request',
      subject: 'x',
    });
    expect(failure).toMatchObject({ code: 'no_responders' });
  });
});
