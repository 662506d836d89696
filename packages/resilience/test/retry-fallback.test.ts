import { BreakerOpenError, CancelledError, UnavailableError, ValidationError } from '@hopline/contracts';
import { describe, expect, it, vi } from 'vitest';
import { retryWithinDeadline, withFallback } from '../src/index.js';

describe('retryWithinDeadline', () => {
  it('retry - a retryable failure is tried again until it succeeds', async () => {
    const attempt = vi.fn(async (n: number) => {
      if (n < 3) throw new UnavailableError('connection reset');
      return 'third time';
    });
    const onRetry = vi.fn();
    await expect(
      retryWithinDeadline(attempt, { deadlineUnixMs: Date.now() + 5_000, attempts: 3, backoffMs: 5, onRetry }),
    ).resolves.toBe('third time');
    expect(attempt).toHaveBeenCalledTimes(3);
    expect(onRetry).toHaveBeenCalledTimes(2);
  });

  it('retry - a failure that is not retryable is thrown at once', async () => {
    const attempt = vi.fn(async () => Promise.reject(new ValidationError('bad query')));
    await expect(
      retryWithinDeadline(attempt, { deadlineUnixMs: Date.now() + 5_000, attempts: 3 }),
    ).rejects.toBeInstanceOf(ValidationError);
    expect(attempt).toHaveBeenCalledTimes(1);
  });

  it('retry - an open breaker is not retried', async () => {
    const attempt = vi.fn(async () => Promise.reject(new BreakerOpenError('reranker')));
    await expect(
      retryWithinDeadline(attempt, { deadlineUnixMs: Date.now() + 5_000, attempts: 3 }),
    ).rejects.toBeInstanceOf(BreakerOpenError);
    expect(attempt).toHaveBeenCalledTimes(1);
  });

  it('retry - the last failure is thrown when the attempts are spent', async () => {
    const attempt = vi.fn(async (n: number) => Promise.reject(new UnavailableError(`attempt ${n}`)));
    await expect(
      retryWithinDeadline(attempt, { deadlineUnixMs: Date.now() + 5_000, attempts: 2, backoffMs: 1 }),
    ).rejects.toThrow('attempt 2');
  });

  it('retry - no attempt starts that the deadline cannot fit', async () => {
    const attempt = vi.fn(async () => Promise.reject(new UnavailableError('down')));
    await expect(
      retryWithinDeadline(attempt, { deadlineUnixMs: Date.now() + 30, attempts: 5, minAttemptMs: 100 }),
    ).rejects.toBeInstanceOf(UnavailableError);
    expect(attempt).toHaveBeenCalledTimes(1);
  });

  it('retry - aborting during the backoff rejects with CancelledError', async () => {
    const caller = new AbortController();
    const attempt = vi.fn(async () => Promise.reject(new UnavailableError('down')));
    const onRetry = () => setImmediate(() => caller.abort());
    // A backoff of several seconds, so that only the abort can end it.
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const started = Date.now();
    await expect(
      retryWithinDeadline(attempt, {
        deadlineUnixMs: Date.now() + 60_000,
        attempts: 3,
        backoffMs: 10_000,
        minAttemptMs: 0,
        signal: caller.signal,
        onRetry,
      }),
    ).rejects.toBeInstanceOf(CancelledError);
    expect(attempt).toHaveBeenCalledTimes(1);
    expect(Date.now() - started).toBeLessThan(4_000);
    vi.restoreAllMocks();
  });

  it("retry - a caller that cancelled while the attempt ran gets CancelledError, not the attempt's failure", async () => {
    const caller = new AbortController();
    const attempt = vi.fn(async () => {
      caller.abort();
      throw new UnavailableError('down');
    });
    await expect(
      retryWithinDeadline(attempt, { deadlineUnixMs: Date.now() + 60_000, attempts: 3, signal: caller.signal }),
    ).rejects.toBeInstanceOf(CancelledError);
    expect(attempt).toHaveBeenCalledTimes(1);
  });
});

describe('withFallback', () => {
  it("fallback - the primary's value is not degraded", async () => {
    await expect(
      withFallback(
        async () => 'cross-encoder order',
        () => 'fused order',
      ),
    ).resolves.toEqual({ value: 'cross-encoder order', degraded: false });
  });

  it("fallback - a failed primary gives the fallback's value, flagged with the failure", async () => {
    const failure = new UnavailableError('reranker down');
    const fallback = vi.fn(() => 'fused order');
    await expect(withFallback(async () => Promise.reject(failure), fallback)).resolves.toEqual({
      value: 'fused order',
      degraded: true,
      error: failure,
    });
    expect(fallback).toHaveBeenCalledWith(failure);
  });

  it('fallback - a cancelled call is not answered by the fallback', async () => {
    const fallback = vi.fn(() => 'fused order');
    await expect(
      withFallback(async () => Promise.reject(new CancelledError('client left')), fallback),
    ).rejects.toBeInstanceOf(CancelledError);
    expect(fallback).not.toHaveBeenCalled();
  });

  it('fallback - `when` narrows which failures fall back', async () => {
    const when = (error: { code: string }) => error.code === 'unavailable';
    await expect(
      withFallback(
        async () => Promise.reject(new ValidationError('bad')),
        () => 'x',
        { when },
      ),
    ).rejects.toBeInstanceOf(ValidationError);
  });
});
