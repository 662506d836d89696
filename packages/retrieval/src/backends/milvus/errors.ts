import {
  CancelledError,
  DeadlineExceededError,
  HoplineError,
  UnavailableError,
  ValidationError,
  isHoplineError,
} from '@hopline/contracts';

/** gRPC status codes the Milvus SDK rejects with (`@grpc/grpc-js` `status`). */
const GRPC = {
  CANCELLED: 1,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

/** Milvus error codes 1100–1199 are parameter errors (`merr.ErrParameterInvalid` and kin). */
const PARAMETER_CODES = { from: 1100, to: 1199 };

/** The `status` Milvus puts in every reply; the SDK hands it back rather than throwing. */
export interface MilvusStatus {
  error_code?: string | number;
  code?: number;
  reason?: string;
  retriable?: boolean;
}

/**
 * Translates what the SDK throws (gRPC failures) into the shared taxonomy: an unreachable or
 * slow server counts against the breaker, a request it refused does not.
 */
export function milvusError(error: unknown, what: string, signal?: AbortSignal): HoplineError {
  if (signal?.aborted) {
    const reason: unknown = signal.reason;
    return isHoplineError(reason) ? reason : new CancelledError(`${what}: aborted`, { cause: error });
  }
  if (isHoplineError(error)) return error;
  // Some SDK calls throw the reply (or its status) instead of returning it.
  const status = thrownStatus(error);
  if (status) return statusError(status, what);
  const code = grpcCode(error);
  const message = `${what}: ${error instanceof Error ? error.message : String(error)}`;
  const options = { cause: error };
  switch (code) {
    case GRPC.UNAVAILABLE:
    case GRPC.RESOURCE_EXHAUSTED:
      return new UnavailableError(message, options);
    case GRPC.DEADLINE_EXCEEDED:
      return new DeadlineExceededError(message, options);
    case GRPC.CANCELLED:
      return new CancelledError(message, options);
    case GRPC.INVALID_ARGUMENT:
      return new ValidationError(message, options);
    case GRPC.UNAUTHENTICATED:
      return new HoplineError('unauthenticated', message, options);
    case GRPC.PERMISSION_DENIED:
      return new HoplineError('permission_denied', message, options);
    default:
      return new HoplineError('internal', message, options);
  }
}

export function succeeded(status: MilvusStatus | undefined): boolean {
  return status !== undefined && (status.error_code === 'Success' || status.error_code === 0) && !status.code;
}

/** Throws unless Milvus reported success; a reply without a status (an RPC it lacks) is an error too. */
export function checkStatus(status: MilvusStatus | undefined, what: string): void {
  if (!succeeded(status)) throw statusError(status, what);
}

/** A parameter error is the request's fault; a retriable one is the server's (breaker, retry). */
export function statusError(status: MilvusStatus | undefined, what: string): HoplineError {
  if (!status || status.error_code === undefined)
    return new HoplineError('internal', `${what}: Milvus sent no status (is the server older than 2.5?)`);
  const message = `${what}: Milvus ${String(status.error_code)}${status.code ? ` ${status.code}` : ''}: ${status.reason ?? ''}`;
  const code = status.code ?? 0;
  if (status.error_code === 'IllegalArgument' || (code >= PARAMETER_CODES.from && code <= PARAMETER_CODES.to))
    return new ValidationError(message);
  if (status.retriable || status.error_code === 'RateLimit') return new UnavailableError(message);
  return new HoplineError('internal', message);
}

function thrownStatus(error: unknown): MilvusStatus | undefined {
  if (typeof error !== 'object' || error === null || error instanceof Error) return undefined;
  if ('error_code' in error) return error as MilvusStatus;
  const status = (error as { status?: unknown }).status;
  return typeof status === 'object' && status !== null && 'error_code' in status ? (status as MilvusStatus) : undefined;
}

function grpcCode(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined;
  const code = (error as { code: unknown }).code;
  return typeof code === 'number' ? code : undefined;
}
