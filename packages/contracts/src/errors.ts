/**
 * The error taxonomy every service shares. A code is stable on the wire (NATS error headers,
 * gRPC status, problem+json `type`); `retryable` tells a caller whether trying again can help;
 * `infrastructure` tells a circuit breaker whether the failure says anything about the health
 * of the dependency (a timeout does, a bad request does not).
 */
export const ERROR_CODES = [
  'invalid_argument',
  'unauthenticated',
  'permission_denied',
  'not_found',
  'resource_exhausted',
  'deadline_exceeded',
  'cancelled',
  'unavailable',
  'no_responders',
  'breaker_open',
  'conflict',
  'internal',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

const INFRASTRUCTURE_CODES: ReadonlySet<ErrorCode> = new Set([
  'deadline_exceeded',
  'unavailable',
  'no_responders',
  'internal',
]);
const RETRYABLE_CODES: ReadonlySet<ErrorCode> = new Set([
  'deadline_exceeded',
  'unavailable',
  'no_responders',
  'breaker_open',
  'resource_exhausted',
]);

export function isErrorCode(value: string): value is ErrorCode {
  return (ERROR_CODES as readonly string[]).includes(value);
}

export interface HoplineErrorOptions {
  cause?: unknown;
  /** True when the error was relayed from a service further down, not raised by the callee. */
  remote?: boolean;
  /** How long a caller should wait before trying again, when the callee knows. */
  retryAfterMs?: number;
}

export class HoplineError extends Error {
  readonly code: ErrorCode;
  readonly retryable: boolean;
  readonly remote: boolean;
  readonly retryAfterMs: number | undefined;

  constructor(code: ErrorCode, message: string, options: HoplineErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.retryable = RETRYABLE_CODES.has(code);
    this.remote = options.remote ?? false;
    this.retryAfterMs = options.retryAfterMs;
  }
}

export class ValidationError extends HoplineError {
  constructor(message: string, options?: HoplineErrorOptions) {
    super('invalid_argument', message, options);
  }
}

export class DeadlineExceededError extends HoplineError {
  constructor(message: string, options?: HoplineErrorOptions) {
    super('deadline_exceeded', message, options);
  }
}

export class CancelledError extends HoplineError {
  constructor(message: string, options?: HoplineErrorOptions) {
    super('cancelled', message, options);
  }
}

export class UnavailableError extends HoplineError {
  constructor(message: string, options?: HoplineErrorOptions) {
    super('unavailable', message, options);
  }
}

/**
 * The message bus itself cannot be reached: the connection to NATS is down (the client is
 * reconnecting), so nothing sent now is delivered. Clients are told "message bus unavailable".
 */
export class BusUnavailableError extends UnavailableError {}

export class NoRespondersError extends HoplineError {
  constructor(subject: string, options?: HoplineErrorOptions) {
    super('no_responders', `no service is listening on ${subject}`, options);
  }
}

export class BreakerOpenError extends HoplineError {
  constructor(downstream: string, options?: HoplineErrorOptions) {
    super('breaker_open', `circuit breaker for ${downstream} is open`, options);
  }
}

/**
 * A write that lost a race: it expected what it followed to be the latest (the last event of a
 * question), and something else was written there first.
 */
export class ConflictError extends HoplineError {
  constructor(message: string, options?: HoplineErrorOptions) {
    super('conflict', message, options);
  }
}

/** An error a remote service sent back in its reply envelope. */
export class RemoteError extends HoplineError {
  constructor(code: ErrorCode, message: string, options?: Omit<HoplineErrorOptions, 'remote'>) {
    super(code, message, { ...options, remote: true });
  }
}

export function isHoplineError(error: unknown): error is HoplineError {
  return error instanceof HoplineError;
}

export const isTimeout = (error: unknown): boolean => isHoplineError(error) && error.code === 'deadline_exceeded';
export const isNoResponders = (error: unknown): boolean => isHoplineError(error) && error.code === 'no_responders';
export const isBreakerOpen = (error: unknown): boolean => isHoplineError(error) && error.code === 'breaker_open';
export const isCancelled = (error: unknown): boolean => isHoplineError(error) && error.code === 'cancelled';
export const isBusUnavailable = (error: unknown): boolean => error instanceof BusUnavailableError;
export const isConflict = (error: unknown): boolean => isHoplineError(error) && error.code === 'conflict';

/**
 * Whether a failure counts against the health of the dependency that raised it. Errors the
 * dependency relayed from further down, and errors about the request itself, do not.
 */
export function isInfrastructureError(error: unknown): boolean {
  if (!isHoplineError(error)) return true;
  if (error.remote && error.code !== 'internal' && error.code !== 'unavailable') return false;
  return INFRASTRUCTURE_CODES.has(error.code);
}

/** Any thrown value as a HoplineError; unknown errors become `internal`. */
export function toHoplineError(error: unknown): HoplineError {
  if (isHoplineError(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new HoplineError('internal', message, { cause: error });
}
