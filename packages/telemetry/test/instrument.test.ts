import { SpanKind, SpanStatusCode, context, propagation, trace } from '@opentelemetry/api';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { createLogger, extractContext, injectContext, instrument } from '../src/index.js';
import { startTestTelemetry } from '../src/testing.js';

const telemetry = startTestTelemetry('instrument-test');
afterAll(() => telemetry.shutdown());
beforeEach(() => telemetry.exporter.reset());

class ExpectedUnknown extends Error {}

describe('instrument', () => {
  it('instrument - ends the span and returns the work result', async () => {
    const result = await instrument(
      'work',
      { kind: SpanKind.INTERNAL, attributes: { 'hopline.hop': 2 } },
      async () => 42,
    );
    expect(result).toBe(42);
    const [span] = telemetry.spansNamed('work');
    expect(span?.ended).toBe(true);
    expect(span?.attributes['hopline.hop']).toBe(2);
    expect(span?.status.code).toBe(SpanStatusCode.UNSET);
  });

  it('instrument - records a failure as an exception event and an error status, and rethrows it', async () => {
    await expect(instrument('failing', {}, async () => Promise.reject(new Error('backend down')))).rejects.toThrow(
      'backend down',
    );
    const [span] = telemetry.spansNamed('failing');
    expect(span?.ended).toBe(true);
    expect(span?.status).toEqual({ code: SpanStatusCode.ERROR, message: 'backend down' });
    expect(span?.events.map((event) => event.name)).toContain('exception');
  });

  it('instrument - an acceptable error leaves the status unset but still rethrows', async () => {
    const acceptableErrors = (error: unknown) => error instanceof ExpectedUnknown;
    await expect(
      instrument('unknown-hop', { acceptableErrors }, async () => Promise.reject(new ExpectedUnknown('no bridge'))),
    ).rejects.toBeInstanceOf(ExpectedUnknown);
    const [span] = telemetry.spansNamed('unknown-hop');
    expect(span?.status.code).toBe(SpanStatusCode.UNSET);
    expect(span?.events.map((event) => event.name)).toEqual(['expected_error']);
  });

  it('instrument - nested spans are parent and child in one trace', async () => {
    await instrument('outer', {}, () => instrument('inner', {}, async () => undefined));
    const [outer] = telemetry.spansNamed('outer');
    const [inner] = telemetry.spansNamed('inner');
    expect(inner?.spanContext().traceId).toBe(outer?.spanContext().traceId);
    expect(inner?.parentSpanContext?.spanId).toBe(outer?.spanContext().spanId);
  });

  it('instrument - a span under an extracted parent continues the remote trace', async () => {
    const headers = await instrument('producer', { kind: SpanKind.PRODUCER }, async () => injectContext({}));
    await instrument('consumer', { kind: SpanKind.CONSUMER, parent: extractContext(headers) }, async () => undefined);
    const [producer] = telemetry.spansNamed('producer');
    const [consumer] = telemetry.spansNamed('consumer');
    expect(consumer?.spanContext().traceId).toBe(producer?.spanContext().traceId);
    expect(consumer?.parentSpanContext?.spanId).toBe(producer?.spanContext().spanId);
  });
});

describe('propagation', () => {
  it('propagation - injected traceparent and baggage round-trip through headers', async () => {
    const baggage = propagation.createBaggage({ 'hopline.tenant': { value: 'acme' } });
    const headers = await instrument('inject', {}, async (span) => {
      const carrier = injectContext({}, propagation.setBaggage(context.active(), baggage));
      expect(carrier.traceparent).toBe(`00-${span.spanContext().traceId}-${span.spanContext().spanId}-01`);
      return carrier;
    });
    expect(headers.baggage).toBe('hopline.tenant=acme');
    const extracted = extractContext(headers);
    expect(trace.getSpanContext(extracted)?.traceId).toBe(telemetry.spansNamed('inject')[0]?.spanContext().traceId);
    expect(trace.getSpanContext(extracted)?.isRemote).toBe(true);
    expect(propagation.getBaggage(extracted)?.getEntry('hopline.tenant')?.value).toBe('acme');
  });

  it('propagation - header names are read whatever their case', () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const extracted = extractContext({ Traceparent: `00-${traceId}-00f067aa0ba902b7-01` });
    expect(trace.getSpanContext(extracted)?.traceId).toBe(traceId);
  });

  it('propagation - headers without traceparent extract to no span context', () => {
    expect(trace.getSpanContext(extractContext({ 'content-type': 'application/x-protobuf' }))).toBeUndefined();
  });
});

describe('logger and trace context', () => {
  it("logger - a line written inside a span carries that span's trace and span ids", async () => {
    const lines: string[] = [];
    const logger = createLogger('retrieval-worker', { destination: { write: (line) => lines.push(line) } });
    const ids = await instrument('logged', {}, async (span) => {
      logger.info('retrieved', { hits: 3 });
      return span.spanContext();
    });
    logger.info('outside');
    const [inside, outside] = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(inside).toMatchObject({
      level: 'info',
      service: 'retrieval-worker',
      msg: 'retrieved',
      hits: 3,
      trace_id: ids.traceId,
      span_id: ids.spanId,
    });
    expect(outside).not.toHaveProperty('trace_id');
    expect(outside).not.toHaveProperty('span_id');
  });
});
