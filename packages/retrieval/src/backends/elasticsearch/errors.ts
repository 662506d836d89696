import { errors } from '@elastic/elasticsearch';
import {
  CancelledError,
  DeadlineExceededError,
  HoplineError,
  UnavailableError,
  ValidationError,
  isHoplineError,
  toHoplineError,
} from '@hopline/contracts';

/**
 * Translates what the Elasticsearch client throws into the shared taxonomy, so the breaker
 * counts a dead or overloaded cluster (unavailable, deadline) and not a request it rejected
 * (invalid argument), and the ingest consumer retries the first and dead-letters the second.
 */
export function elasticsearchError(error: unknown, what: string, signal?: AbortSignal): HoplineError {
  if (signal?.aborted || error instanceof errors.RequestAbortedError) {
    // The guard aborts with the reason it gave up (deadline or caller cancellation).
    const reason: unknown = signal?.reason;
    return isHoplineError(reason) ? reason : new CancelledError(`${what}: request aborted`, { cause: error });
  }
  if (isHoplineError(error)) return error;
  if (error instanceof errors.TimeoutError)
    return new DeadlineExceededError(`${what}: Elasticsearch did not answer in time`, { cause: error });
  if (error instanceof errors.ConnectionError || error instanceof errors.NoLivingConnectionsError) {
    return new UnavailableError(`${what}: Elasticsearch is unreachable (${error.message})`, { cause: error });
  }
  if (error instanceof errors.ResponseError)
    return statusError(error.statusCode, `${what}: ${describeResponse(error)}`, error);
  return toHoplineError(error);
}

/** The error for one HTTP status, whole-request or per bulk item. */
export function statusError(status: number | undefined, message: string, cause?: unknown): HoplineError {
  const options = cause === undefined ? {} : { cause };
  if (status === 400) return new ValidationError(message, options);
  if (status === 401) return new HoplineError('unauthenticated', message, options);
  if (status === 403) return new HoplineError('permission_denied', message, options);
  if (status === 408) return new DeadlineExceededError(message, options);
  // Every call that names a document ignores its 404, so a 404 left is an index missing
  // (index_not_found_exception): deleted under a running worker, which creates its indexes when
  // it starts. That is an outage of the store, not a fault of the command: retried as one, an
  // ingest command waits out the restart that mends it instead of being dead-lettered.
  if (status === 404) return new UnavailableError(`${message}; restart the worker to create the index`, options);
  // A 500 is as often a node lost mid-request (node_disconnected_exception, a shard failing over)
  // as a fault of the request: retried like an outage, it loses no document to a cluster that
  // heals within the ingest retries' hour. 501 says the cluster lacks the feature: no retry mends it.
  if (status === 429 || status === 500 || (status !== undefined && status >= 502))
    return new UnavailableError(message, options);
  return new HoplineError('internal', message, options);
}

function describeResponse(error: InstanceType<typeof errors.ResponseError>): string {
  const body: unknown = error.body;
  if (typeof body === 'object' && body !== null && 'error' in body) {
    const detail = (body as { error: unknown }).error;
    if (typeof detail === 'object' && detail !== null) {
      const { type, reason } = detail as { type?: unknown; reason?: unknown };
      if (typeof type === 'string')
        return `HTTP ${error.statusCode}: ${type}${typeof reason === 'string' ? ` (${reason})` : ''}`;
    }
  }
  return `HTTP ${error.statusCode}: ${error.message}`;
}
