import type { Metadata } from '@grpc/grpc-js';
import { extractContext, injectContext, type HeaderCarrier } from '@hopline/telemetry';
import type { Context } from '@opentelemetry/api';

/** The metadata's text entries as a header carrier (binary `-bin` entries are skipped). */
function carrierOf(metadata: Metadata): HeaderCarrier {
  const carrier: HeaderCarrier = {};
  for (const [key, value] of Object.entries(metadata.getMap())) {
    if (typeof value === 'string') carrier[key] = value;
  }
  return carrier;
}

/** Writes the active trace context (`traceparent`, `tracestate`, `baggage`) into the metadata. */
export function injectMetadata(metadata: Metadata): Metadata {
  for (const [key, value] of Object.entries(injectContext({}))) metadata.set(key, value);
  return metadata;
}

/** The trace context a call's metadata carries. */
export function extractMetadata(metadata: Metadata): Context {
  return extractContext(carrierOf(metadata));
}
