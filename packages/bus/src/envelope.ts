import { headers, isErrorCode, RemoteError, toHoplineError } from '@hopline/contracts';
import type { BusHeaders, BusMessage } from './bus.js';

// Header values travel on one line and count against the server's max payload.
const MAX_MESSAGE_CHARS = 1_024;

/** The headers that carry a handler's failure back to the requester; unknown errors become `internal`. */
export function errorEnvelope(error: unknown): BusHeaders {
  const failure = toHoplineError(error);
  const message = failure.message
    .replace(/[\r\n]+/g, ' ')
    .trim()
    .slice(0, MAX_MESSAGE_CHARS);
  return { [headers.errorCode]: failure.code, [headers.errorMessage]: message || failure.code };
}

/** Throws the RemoteError a reply carries in its envelope; returns the reply when it carries none. */
export function raiseIfErrorEnvelope(reply: BusMessage): BusMessage {
  const code = reply.headers[headers.errorCode];
  if (code === undefined) return reply;
  const message = reply.headers[headers.errorMessage] ?? 'remote error without a message';
  if (isErrorCode(code)) throw new RemoteError(code, message);
  throw new RemoteError('internal', `${message} (unknown error code "${code}")`);
}
