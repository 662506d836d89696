import { context, propagation, type Context } from '@opentelemetry/api';

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

const getter = {
  keys: (carrier: Readonly<HeaderCarrier>) => Object.keys(carrier),
  get: (carrier: Readonly<HeaderCarrier>, key: string) => carrier[key],
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
