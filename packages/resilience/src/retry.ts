import { toHoplineError, type HoplineError } from '@hopline/contracts';
import { remainingMs } from './deadline.js';
import { abortReason, sleep } from './signals.js';

export interface RetryOptions {
  /** No attempt starts unless it can still finish before this (ms since the Unix epoch). */
  deadlineUnixMs: number;
  /** Attempts in all, the first included. Default 2. */
  attempts?: number;
  /** Backoff before the second attempt; doubles after each, with full jitter. Default 50 ms. */
  backoffMs?: number;
  /** An attempt is only worth starting with at least this much of the deadline left. Default 50 ms. */
  minAttemptMs?: number;
  signal?: AbortSignal;
  /** Which failures are worth another attempt. Default: `retryable` ones, except an open breaker. */
  retryable?: (error: HoplineError) => boolean;
  /**
   * The wait a failure itself asks for (a 429's `Retry-After`), used instead of the backoff;
   * undefined for the backoff. An attempt the deadline cannot fit after that wait never starts.
   */
  delayOf?: (error: HoplineError) => number | undefined;
  /** Called before each backoff; for logs and span events. */
  onRetry?: (error: HoplineError, nextAttempt: number, delayMs: number) => void;
}

// An open breaker will still be open after a backoff of milliseconds: retrying it only burns the deadline.
const defaultRetryable = (error: HoplineError): boolean => error.retryable && error.code !== 'breaker_open';

/**
 * Runs `attempt` until it succeeds, the failure is not retryable, the attempts are spent, or
 * the deadline leaves no room for another try; then rejects with the last failure.
 */
export async function retryWithinDeadline<T>(
  attempt: (attemptNumber: number) => Promise<T>,
  options: RetryOptions,
): Promise<T> {
  const attempts = options.attempts ?? 2;
  const backoffMs = options.backoffMs ?? 50;
  const minAttemptMs = options.minAttemptMs ?? 50;
  const retryable = options.retryable ?? defaultRetryable;
  for (let attemptNumber = 1; ; attemptNumber += 1) {
    try {
      return await attempt(attemptNumber);
    } catch (error) {
      const failure = toHoplineError(error);
      if (options.signal?.aborted) throw abortReason(options.signal);
      if (attemptNumber >= attempts || !retryable(failure)) throw failure;
      const delayMs = options.delayOf?.(failure) ?? Math.random() * backoffMs * 2 ** (attemptNumber - 1);
      if (remainingMs(options.deadlineUnixMs) < delayMs + minAttemptMs) throw failure;
      options.onRetry?.(failure, attemptNumber + 1, delayMs);
      await sleep(delayMs, options.signal);
    }
  }
}
