import { HoplineError } from '@hopline/contracts';

/**
 * The model server said 429: back-pressure, not ill health. `resource_exhausted` is retryable
 * but no breaker counts it; the retry waits `retryAfterMs` (the `Retry-After` header) when given.
 */
export class RateLimitedError extends HoplineError {
  constructor(message: string, retryAfterMs: number | undefined, options?: { cause?: unknown }) {
    super('resource_exhausted', message, { ...options, retryAfterMs });
  }
}

/**
 * A streamed answer that did not finish: the server stopped at `max_tokens` (`length`), or the
 * stream ended without a finish reason (`cut`: a closed connection, a proxy's timeout). What
 * was streamed is only the start of an answer.
 */
export class IncompleteAnswerError extends HoplineError {
  constructor(
    message: string,
    readonly reason: 'length' | 'cut',
  ) {
    super('unavailable', message);
  }
}
