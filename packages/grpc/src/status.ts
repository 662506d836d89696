import { status as GrpcStatus, Metadata, type ServiceError, type StatusObject } from '@grpc/grpc-js';
import {
  CancelledError,
  DeadlineExceededError,
  isErrorCode,
  RemoteError,
  retryAfterMs,
  toHoplineError,
  UnavailableError,
  type ErrorCode,
  type HoplineError,
} from '@hopline/contracts';

/** Trailing metadata key that carries the Hopline error code beside the gRPC status. */
export const ERROR_CODE_METADATA_KEY = 'hopline-error-code';
/** Trailing metadata key with the seconds to wait before retrying, as HTTP's Retry-After header. */
export const RETRY_AFTER_METADATA_KEY = 'retry-after';

const STATUS_BY_CODE: Record<ErrorCode, GrpcStatus> = {
  invalid_argument: GrpcStatus.INVALID_ARGUMENT,
  unauthenticated: GrpcStatus.UNAUTHENTICATED,
  permission_denied: GrpcStatus.PERMISSION_DENIED,
  not_found: GrpcStatus.NOT_FOUND,
  resource_exhausted: GrpcStatus.RESOURCE_EXHAUSTED,
  deadline_exceeded: GrpcStatus.DEADLINE_EXCEEDED,
  cancelled: GrpcStatus.CANCELLED,
  unavailable: GrpcStatus.UNAVAILABLE,
  no_responders: GrpcStatus.UNAVAILABLE,
  breaker_open: GrpcStatus.UNAVAILABLE,
  conflict: GrpcStatus.ABORTED,
  internal: GrpcStatus.INTERNAL,
};

// For a status that came without a Hopline code: the nearest code in the taxonomy.
const CODE_BY_STATUS: Partial<Record<GrpcStatus, ErrorCode>> = {
  [GrpcStatus.INVALID_ARGUMENT]: 'invalid_argument',
  [GrpcStatus.OUT_OF_RANGE]: 'invalid_argument',
  [GrpcStatus.FAILED_PRECONDITION]: 'invalid_argument',
  [GrpcStatus.UNAUTHENTICATED]: 'unauthenticated',
  [GrpcStatus.PERMISSION_DENIED]: 'permission_denied',
  [GrpcStatus.NOT_FOUND]: 'not_found',
  [GrpcStatus.RESOURCE_EXHAUSTED]: 'resource_exhausted',
  [GrpcStatus.DEADLINE_EXCEEDED]: 'deadline_exceeded',
  [GrpcStatus.CANCELLED]: 'cancelled',
  [GrpcStatus.UNAVAILABLE]: 'unavailable',
  [GrpcStatus.ABORTED]: 'conflict',
};

export function grpcStatusFor(code: ErrorCode): GrpcStatus {
  return STATUS_BY_CODE[code];
}

/** `OK`, `DEADLINE_EXCEEDED`...: the status name metrics and span attributes use. */
export function grpcStatusName(code: GrpcStatus): string {
  return GrpcStatus[code] ?? `STATUS_${code}`;
}

/**
 * What a server sends for a failed call: the mapped status, with the Hopline code in the
 * trailers, and `retry-after` (whole seconds, at least 1) when the error says when to retry.
 */
export function toGrpcStatus(
  error: unknown,
): Partial<StatusObject> & { code: GrpcStatus; details: string; metadata: Metadata } {
  const failure = toHoplineError(error);
  const metadata = new Metadata();
  metadata.set(ERROR_CODE_METADATA_KEY, failure.code);
  if (failure.retryAfterMs !== undefined)
    metadata.set(RETRY_AFTER_METADATA_KEY, String(Math.max(1, Math.ceil(failure.retryAfterMs / 1000))));
  return { code: grpcStatusFor(failure.code), details: failure.message, metadata };
}

/** The `retry-after` trailer in ms; undefined when absent or unreadable. */
function retryAfterMsOf(metadata: Metadata | undefined): number | undefined {
  const value = metadata?.get(RETRY_AFTER_METADATA_KEY)[0];
  return typeof value === 'string' ? retryAfterMs(value) : undefined;
}

/**
 * A failed call as a HoplineError. A status the remote handler raised carries its Hopline
 * code in the trailers (and `retry-after`, when it said when to retry) and becomes a
 * RemoteError with that code and wait, so a failure relayed from further down does not count
 * against the callee's breaker. A status without one was made by the transport (the deadline
 * passed, the server is unreachable, the call was cancelled) and becomes the matching local
 * error. CANCELLED is a cancellation only when this side asked for it (`cancelledHere`);
 * otherwise the server dropped the call (a forced shutdown) and the dependency is, for this
 * call, unavailable.
 */
export function fromGrpcError(
  error: Partial<ServiceError> & { code?: number },
  options: { cancelledHere?: boolean } = {},
): HoplineError {
  const details = error.details ?? error.message ?? 'gRPC call failed';
  const relayed = error.metadata?.get(ERROR_CODE_METADATA_KEY)[0];
  if (typeof relayed === 'string' && isErrorCode(relayed))
    return new RemoteError(relayed, details, { cause: error, retryAfterMs: retryAfterMsOf(error.metadata) });
  switch (error.code) {
    case GrpcStatus.DEADLINE_EXCEEDED:
      return new DeadlineExceededError(details, { cause: error });
    case GrpcStatus.UNAVAILABLE:
      return new UnavailableError(details, { cause: error });
    case GrpcStatus.CANCELLED:
      return options.cancelledHere
        ? new CancelledError(details, { cause: error })
        : new UnavailableError(`the server cancelled the call: ${details}`, { cause: error });
    default:
      return new RemoteError(
        (error.code === undefined ? undefined : CODE_BY_STATUS[error.code as GrpcStatus]) ?? 'internal',
        details,
        { cause: error },
      );
  }
}
