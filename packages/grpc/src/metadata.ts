import type { Metadata } from '@grpc/grpc-js';
import { context, propagation, type Context, type TextMapGetter, type TextMapSetter } from '@opentelemetry/api';

// Straight onto the Metadata, without copying it into a header object first: every call pays this.
const setter: TextMapSetter<Metadata> = {
  set: (metadata, key, value) => metadata.set(key, value),
};

const getter: TextMapGetter<Metadata> = {
  keys: (metadata) => Object.keys(metadata.getMap()),
  get: (metadata, key) => {
    const [value] = metadata.get(key);
    // Binary (`-bin`) entries never carry W3C context.
    return typeof value === 'string' ? value : undefined;
  },
};

/** Writes the active trace context (`traceparent`, `tracestate`, `baggage`) into the metadata. */
export function injectMetadata(metadata: Metadata, from: Context = context.active()): Metadata {
  propagation.inject(from, metadata, setter);
  return metadata;
}

/** The trace context a call's metadata carries, on top of the active one. */
export function extractMetadata(metadata: Metadata, into: Context = context.active()): Context {
  return propagation.extract(into, metadata, getter);
}
