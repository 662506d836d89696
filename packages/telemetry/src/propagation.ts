import { context, propagation, type Context } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-base';

/**
 * The two helpers that carry trace context across NATS: W3C `traceparent`/`tracestate`
 * (and baggage) go into message headers on the way out and come back into a Context on
 * the way in. gRPC metadata has its own pair in `@hopline/grpc` (`injectMetadata`,
 * `extractMetadata`) over the same globally registered propagator.
 */
export type HeaderCarrier = Record<string, string>;

const setter = {
  set(carrier: HeaderCarrier, key: string, value: string) {
    carrier[key] = value;
  },
};

// Header names are case-insensitive: a producer outside Hopline may write "Traceparent".
const getter = {
  keys: (carrier: Readonly<HeaderCarrier>) => Object.keys(carrier),
  get: (carrier: Readonly<HeaderCarrier>, key: string) =>
    carrier[key] ?? Object.entries(carrier).find(([name]) => name.toLowerCase() === key)?.[1],
};

/** Writes the active (or given) context into the headers and returns them. */
export function injectContext(headers: HeaderCarrier = {}, from: Context = context.active()): HeaderCarrier {
  propagation.inject(from, headers, setter);
  return headers;
}

/** The context a message's headers carry, on top of the active one. */
export function extractContext(headers: Readonly<HeaderCarrier>, into: Context = context.active()): Context {
  return propagation.extract(into, headers, getter);
}

/** The baggage entry, and the span attribute, that name a question. */
const QUESTION_ID = 'hopline.question_id';

/**
 * The context with the question's id in its W3C baggage: it travels with the trace context in
 * every NATS header and gRPC metadata written under it, so every service's spans can carry it.
 */
export function withQuestionId(questionId: string, into: Context = context.active()): Context {
  const baggage = propagation.getBaggage(into) ?? propagation.createBaggage();
  return propagation.setBaggage(into, baggage.setEntry(QUESTION_ID, { value: questionId }));
}

/** Copies the question id from the baggage onto every span as it starts, in every service. */
export class QuestionIdSpanProcessor implements SpanProcessor {
  onStart(span: Span, parentContext: Context): void {
    const questionId = propagation.getBaggage(parentContext)?.getEntry(QUESTION_ID)?.value;
    if (questionId) span.setAttribute(QUESTION_ID, questionId);
  }
  onEnd(_span: ReadableSpan): void {}
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}
