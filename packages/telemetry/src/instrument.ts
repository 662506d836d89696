import {
  SpanStatusCode,
  TraceFlags,
  context,
  isSpanContextValid,
  trace,
  type Attributes,
  type Context,
  type Span,
  type SpanContext,
  type SpanKind,
} from '@opentelemetry/api';
import { spansRecorded } from './recording.js';

export interface InstrumentOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  /** Start under this context instead of the active one (a message's extracted context). */
  parent?: Context;
  /**
   * Errors that are an expected outcome rather than a failure (an UNKNOWN hop, a cancelled
   * question): they are recorded as events but leave the span's status unset.
   */
  acceptableErrors?: (error: unknown) => boolean;
}

const tracer = () => trace.getTracer('hopline');

/**
 * Runs `work` inside an active span: records an exception, sets the status, and always ends
 * the span. The one way Hopline code opens a span.
 */
export function instrument<T>(name: string, options: InstrumentOptions, work: (span: Span) => Promise<T>): Promise<T> {
  const parent = options.parent ?? context.active();
  if (!spansRecorded()) {
    const parentSpan = trace.getSpan(parent);
    // A root still opens a span: it gives the work its trace id. So does a child of a sampled
    // span from another process: its own unsampled span tells the services downstream not to
    // record either.
    if (parentSpan && isUnsampled(parentSpan.spanContext())) {
      return parent === context.active()
        ? runInParent(parentSpan, work)
        : context.with(parent, runInParent<T>, undefined, parentSpan, work);
    }
  }
  // Every cross-service call passes through here, so it creates no closure it can avoid.
  return tracer().startActiveSpan(name, { kind: options.kind, attributes: options.attributes }, parent, (span) =>
    runInSpan(span, work, options.acceptableErrors),
  );
}

function isUnsampled(spanContext: SpanContext): boolean {
  return isSpanContextValid(spanContext) && (spanContext.traceFlags & TraceFlags.SAMPLED) === 0;
}

/**
 * Unrecorded: the work gets its parent's span, which it must not end, and its own promise is
 * the result (an async wrapper would add a promise, and its context hooks, to every call); a
 * synchronous throw still rejects.
 */
function runInParent<T>(span: Span, work: (span: Span) => Promise<T>): Promise<T> {
  try {
    return work(span);
  } catch (error) {
    return Promise.reject(error as Error);
  }
}

async function runInSpan<T>(
  span: Span,
  work: (span: Span) => Promise<T>,
  acceptableErrors: ((error: unknown) => boolean) | undefined,
): Promise<T> {
  try {
    return await work(span);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (acceptableErrors?.(error)) {
      span.addEvent('expected_error', { 'error.message': message });
    } else {
      markSpanFailed(span, errorType(error), message, error);
    }
    throw error;
  } finally {
    span.end();
  }
}

/**
 * Records a span for work that was over before anyone opened one (a request refused before its
 * handler ran): it covers `startTime` (epoch milliseconds) to now, `annotate` adding what the
 * outcome was before it ends.
 */
export function recordSpan(
  name: string,
  options: Omit<InstrumentOptions, 'acceptableErrors'> & { startTime: number },
  annotate: (span: Span) => void,
): void {
  const span = tracer().startSpan(
    name,
    { kind: options.kind, attributes: options.attributes, startTime: options.startTime },
    options.parent ?? context.active(),
  );
  try {
    annotate(span);
  } finally {
    span.end();
  }
}

/** OpenTelemetry's `error.type`: a Hopline error's taxonomy code, else the error's class name. */
function errorType(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string' && code) return code;
  return error instanceof Error ? error.name : 'unknown';
}

/**
 * Marks a span failed: status ERROR with the message and `error.type` (a taxonomy code, an HTTP
 * status), plus the exception when there is one. For failures that are answered rather than
 * thrown: a 5xx problem document, a question's stream that ends with an error event.
 */
export function markSpanFailed(span: Span, type: string, message: string, error?: unknown): void {
  if (error !== undefined) span.recordException(error instanceof Error ? error : new Error(message));
  span.setAttribute('error.type', type);
  span.setStatus({ code: SpanStatusCode.ERROR, message });
}
