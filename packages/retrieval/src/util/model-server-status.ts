import { DeadlineExceededError, HoplineError, UnavailableError, ValidationError } from '@hopline/contracts';

/** Bad request, payload too large, unprocessable entity: the texts sent, not the server, are at fault. */
const TEXT_REFUSED: ReadonlySet<number> = new Set([400, 413, 422]);

/**
 * The error for an HTTP model server's (an embedder's, a cross-encoder's) answer of `status`.
 * Only a refusal of what the texts hold is a ValidationError, which no retry mends: the ingest
 * consumer dead-letters the command at once, a retrieval fails rather than degrades, and a
 * breaker does not count it. Any other answer (a timeout, a model or route not found, a
 * conflict) is the server's state, and passes.
 */
export function modelServerError(status: number, message: string, cause: unknown): HoplineError {
  const options = { cause };
  if (status === 429) return new HoplineError('resource_exhausted', message, options);
  if (status === 401) return new HoplineError('unauthenticated', message, options);
  if (status === 403) return new HoplineError('permission_denied', message, options);
  if (status === 408) return new DeadlineExceededError(message, options);
  if (TEXT_REFUSED.has(status)) return new ValidationError(message, options);
  return new UnavailableError(message, options);
}
