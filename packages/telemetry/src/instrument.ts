import { SpanStatusCode, trace, type Attributes, type Span, type SpanKind, type Context } from '@opentelemetry/api';

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
export async function instrument<T>(name: string, options: InstrumentOptions, work: (span: Span) => Promise<T>): Promise<T> {
  const spanOptions = { kind: options.kind, attributes: options.attributes };
  const run = async (span: Span): Promise<T> => {
    try {
      return await work(span);
    } catch (error) {
      if (options.acceptableErrors?.(error)) {
        span.addEvent('expected_error', { 'error.message': error instanceof Error ? error.message : String(error) });
      } else {
        span.recordException(error instanceof Error ? error : new Error(String(error)));
        span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
      }
      throw error;
    } finally {
      span.end();
    }
  };
  return options.parent === undefined
    ? tracer().startActiveSpan(name, spanOptions, run)
    : tracer().startActiveSpan(name, spanOptions, options.parent, run);
}
