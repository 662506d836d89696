import { isBusUnavailable, isHoplineError, type ErrorCode } from '@hopline/contracts';

/**
 * Errors at the HTTP edge are RFC 9457 problem documents with a stable `type`, so clients
 * branch on the type, never on the wording of `detail`.
 */
export class Problem extends Error {
  constructor(
    readonly status: number,
    readonly slug: string,
    readonly title: string,
    readonly detail?: string,
    readonly headers: Record<string, string> = {},
    /** RFC 9457 extension members, sent beside the standard ones. */
    readonly extensions: Record<string, unknown> = {},
  ) {
    super(detail ?? title);
    this.name = 'Problem';
  }

  get type(): string {
    return `urn:hopline:problem:${this.slug}`;
  }

  /** The same problem with another detail: what it came to say, and more. */
  withDetail(detail: string): Problem {
    const problem = new Problem(this.status, this.slug, this.title, detail, this.headers, this.extensions);
    // What caused a server's fault is logged with it, whatever the client is told.
    if (this.cause !== undefined) problem.cause = this.cause;
    return problem;
  }

  /** The same problem, logged with the error that caused it. */
  causedBy(cause: unknown): Problem {
    this.cause = cause;
    return this;
  }
}

export const problems = {
  unauthenticated: (detail: string) =>
    new Problem(401, 'unauthenticated', 'Missing or unknown API key', detail, { 'WWW-Authenticate': 'Bearer' }),
  forbidden: (detail: string) => new Problem(403, 'forbidden', "Outside the API key's scope", detail),
  notFound: (detail: string) => new Problem(404, 'not-found', 'Not found', detail),
  methodNotAllowed: (allowed: string) =>
    new Problem(405, 'method-not-allowed', 'Method not allowed', `use ${allowed}`, { Allow: allowed }),
  /** Names the setting as well, so that whoever runs the gateway knows which one to raise. */
  payloadTooLarge: (limit: number, setting: string, what = 'the body') =>
    new Problem(413, 'payload-too-large', 'Request body too large', `${what} exceeds ${limit} bytes (${setting})`, {
      // The rest of the body is not read: a client still sending learns it from the closed connection.
      Connection: 'close',
    }),
  unsupportedMediaType: (accepted = 'application/json, with no parameter but charset=utf-8') =>
    new Problem(415, 'unsupported-media-type', 'Unsupported media type', `send Content-Type: ${accepted}`),
  conflict: (detail: string) => new Problem(409, 'conflict', 'Conflict with the current state', detail),
  malformedJson: (detail: string) => new Problem(400, 'malformed-json', 'Malformed JSON', detail),
  badRequest: (detail: string) => new Problem(400, 'bad-request', 'Bad request', detail),
  headersTooLarge: () =>
    new Problem(431, 'headers-too-large', 'Request header fields too large', 'the request headers exceed 16 KiB'),
  requestTimeout: () =>
    new Problem(
      408,
      'request-timeout',
      'Request timeout',
      'the request was not received in time; the connection closes',
    ),
  /** A file that was received but has nothing to ingest (corrupt, a scan without text, an unknown type). */
  unreadableDocument: (detail: string) =>
    new Problem(422, 'unreadable-document', 'The file cannot be ingested', detail),
  invalidRequest: (detail: string) => new Problem(400, 'invalid-request', 'Invalid request', detail),
  tooManyRequests: (detail: string, retryAfterMs: number) =>
    new Problem(429, 'too-many-requests', 'Too many requests', detail, {
      'Retry-After': String(Math.max(1, Math.ceil(retryAfterMs / 1000))),
    }),
  resumeUnavailable: (detail: string) =>
    new Problem(410, 'resume-unavailable', 'The stream cannot be resumed from there', detail),
  unavailable: (detail: string, retryAfterMs?: number) =>
    new Problem(
      503,
      'unavailable',
      'Service unavailable',
      detail,
      retryAfterMs === undefined ? {} : { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterMs / 1000))) },
    ),
  shuttingDown: () =>
    new Problem(503, 'shutting-down', 'The gateway is shutting down', 'retry on another instance', {
      'Retry-After': '1',
    }),
  timeout: (detail: string) => new Problem(504, 'timeout', 'The question ran out of time', detail),
  // 499 as nginx logs it: nobody reads this response, but the request's span and log need a status.
  clientClosedRequest: () =>
    new Problem(499, 'client-closed-request', 'Client closed the request', 'the connection closed mid-request'),
  internal: () => new Problem(500, 'internal', 'Internal error', "the error was logged with the request's trace id"),
  /** The document parser failed on a file for a reason of its own, not the file's; `cause` is logged. */
  parserFailed: (file: string, cause: unknown) =>
    new Problem(
      500,
      'internal',
      'Internal error',
      `${file}: the document parser failed, not the file; the error was logged with the request's trace id`,
    ).causedBy(cause),
} as const;

/** NATS clients retry every 2 s; a client retrying sooner would meet the same outage. */
const BUS_RETRY_AFTER_MS = 2_000;

const STATUS_BY_CODE: Partial<Record<ErrorCode, () => Problem>> = {
  invalid_argument: () => problems.invalidRequest('the request was rejected downstream'),
  // The gateway's own read (a question's log, a kb's state) that timed out: nothing happened to
  // any question, and asking again may find the bus answering.
  deadline_exceeded: () => problems.unavailable('the message bus did not answer in time', 1_000),
  unavailable: () => problems.unavailable('a dependency is unavailable'),
  no_responders: () => problems.unavailable('no hop-reasoner is running', 1_000),
  breaker_open: () => problems.unavailable('the hop-reasoners are failing; retry later', 1_000),
};

/**
 * A JSON question whose answer is only partial: it ran out of time (`DEADLINE`) or the model's
 * answer broke off (`INCOMPLETE`). Not a plain success: the status says so, and `done` holds
 * what was written, flagged, with its reasons. Undefined for every other stop reason.
 */
export function problemFromPartialDone(stopReason: string, done: unknown): Problem | undefined {
  if (stopReason === 'DEADLINE')
    return new Problem(
      504,
      'timeout',
      'The question ran out of time',
      'the question reached its deadline before its answer was complete; `done` holds what was written',
      {},
      { done },
    );
  if (stopReason === 'INCOMPLETE')
    return new Problem(
      502,
      'answer-incomplete',
      "The model's answer broke off",
      "the model's answer stream ended before it finished; `done` holds what was written",
      {},
      { done },
    );
  return undefined;
}

/** How soon to ask again after a question ended in a retryable refusal (a gateway shutting down, the bus away). */
const RETRYABLE_END_RETRY_AFTER_MS = 1_000;

/**
 * A question that ended with an error event, as the problem a JSON client receives; one the
 * event calls retryable tells the client when to ask again, as a refusal before the ask would.
 */
export function problemFromErrorEvent(
  error: { code: string; message: string; retryable?: boolean } | null | undefined,
): Problem {
  const code = error?.code ?? 'internal';
  const detail = error?.message || 'the question failed';
  if (code === 'deadline_exceeded') return problems.timeout(detail);
  if (code === 'unavailable' || code === 'no_responders' || code === 'breaker_open')
    return problems.unavailable(detail, error?.retryable ? RETRYABLE_END_RETRY_AFTER_MS : undefined);
  if (code === 'cancelled') return new Problem(409, 'cancelled', 'The question was cancelled', detail);
  return new Problem(502, 'question-failed', 'The question failed', `${code}: ${detail}`);
}

/** How Node's HTTP server fails the body of a request whose connection closed mid-body. */
const isRequestAborted = (error: unknown): boolean =>
  error instanceof Error && (error as NodeJS.ErrnoException).code === 'ECONNRESET' && error.message === 'aborted';

export function toProblem(error: unknown): Problem {
  if (error instanceof Problem) return error;
  if (isRequestAborted(error)) return problems.clientClosedRequest();
  if (isBusUnavailable(error)) return problems.unavailable('message bus unavailable', BUS_RETRY_AFTER_MS);
  if (isHoplineError(error)) return STATUS_BY_CODE[error.code]?.() ?? problems.internal();
  return problems.internal();
}

export interface ProblemDocument {
  [extension: string]: unknown;
  type: string;
  title: string;
  status: number;
  detail?: string;
}

/** The RFC 9457 document of a problem: its extension members beside the standard ones. */
export function problemDocument(problem: Problem): ProblemDocument {
  return {
    ...problem.extensions,
    type: problem.type,
    title: problem.title,
    status: problem.status,
    detail: problem.detail,
  };
}
