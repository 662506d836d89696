import {
  CancelledError,
  ConflictError,
  DeadlineExceededError,
  HoplineError,
  NoRespondersError,
  toHoplineError,
  UnavailableError,
  ValidationError,
} from '@hopline/contracts';
import { ErrorCode, NatsError } from 'nats';

// JetStream's error code for a publish whose expected last sequence did not match.
const JS_WRONG_LAST_SEQUENCE = 10071;

export interface NatsErrorContext {
  operation: string;
  subject?: string;
  timeoutMs?: number;
}

/** A nats.js failure as the Hopline error a caller can act on. */
export function fromNatsError(error: unknown, context: NatsErrorContext): HoplineError {
  if (error instanceof HoplineError) return error;
  if (!(error instanceof NatsError)) return toHoplineError(error);
  const where = context.subject === undefined ? context.operation : `${context.operation} ${context.subject}`;
  const options = { cause: error };
  if (error.api_error?.err_code === JS_WRONG_LAST_SEQUENCE) {
    return new ConflictError(`${where}: ${error.api_error.description}`, options);
  }
  switch (error.code) {
    case ErrorCode.Timeout:
      return new DeadlineExceededError(
        context.timeoutMs === undefined
          ? `${where}: the server did not answer in time`
          : `${where}: no answer within ${context.timeoutMs} ms`,
        options,
      );
    case ErrorCode.NoResponders:
      return new NoRespondersError(context.subject ?? context.operation, options);
    case ErrorCode.Cancelled:
      return new CancelledError(`${where}: cancelled`, options);
    case ErrorCode.ConnectionClosed:
    case ErrorCode.ConnectionDraining:
    case ErrorCode.ConnectionRefused:
    case ErrorCode.ConnectionTimeout:
    case ErrorCode.Disconnect:
      return new UnavailableError(`${where}: NATS connection unavailable (${error.message})`, options);
    case ErrorCode.MaxPayloadExceeded:
      return new ValidationError(`${where}: message exceeds the server's max payload`, options);
    case ErrorCode.BadSubject:
    case ErrorCode.BadHeader:
    case ErrorCode.BadPayload:
    case ErrorCode.InvalidOption:
      return new ValidationError(`${where}: ${error.message}`, options);
    default:
      return new HoplineError('internal', `${where}: ${error.message}`, options);
  }
}

/**
 * A JetStream call's failure. A 503 there (no responders on a stream's subject, or the API's
 * "JetStream temporarily unavailable") means no server serves the stream right now: a
 * clustered stream has no leader while its replicas elect one after a node was lost, and its
 * followers do not listen on its subjects. That is the bus being unavailable for a moment,
 * which a caller retries within its deadline, not a service that is not listening.
 */
export function fromJetStreamError(error: unknown, context: NatsErrorContext): HoplineError {
  if (error instanceof NatsError && (error.code === ErrorCode.NoResponders || error.api_error?.code === 503)) {
    const where = context.subject === undefined ? context.operation : `${context.operation} ${context.subject}`;
    const why = error.api_error?.description ?? 'no server serves the stream (a leader is being elected?)';
    return new UnavailableError(`${where}: JetStream unavailable: ${why}`, { cause: error });
  }
  return fromNatsError(error, context);
}
