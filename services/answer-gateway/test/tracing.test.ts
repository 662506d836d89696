import * as grpc from '@grpc/grpc-js';
import { loadHoplineGrpc } from '@hopline/contracts';
import { startTestTelemetry } from '@hopline/telemetry/testing';
import { waitFor } from '@hopline/test-support';
import { SpanKind } from '@opentelemetry/api';
import { afterAll, describe, expect, it } from 'vitest';
import { askSse, startTestGateway } from './support/harness.js';

const telemetry = startTestTelemetry('answer-gateway');
afterAll(() => telemetry.shutdown());

type ReadableSpan = ReturnType<typeof telemetry.spans>[number];
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

describe('answer-gateway traces', () => {
  it('an SSE question is one trace: the client’s traceparent → the gateway SERVER span → the qa.ask request → the reasoner', async () => {
    await using t = await startTestGateway();
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const stream = await askSse(t.baseUrl, t.keys.alice, { question: 'Who owns Atlas?' });
    await stream.ended;
    const withParent = await fetch(`${t.baseUrl}/v1/ask`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${t.keys.alice.key}`,
        'Content-Type': 'application/json',
        traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
      },
      body: JSON.stringify({ question: 'Who owns Atlas, again?' }),
    });
    expect(withParent.status).toBe(200);

    const server = await waitFor(() =>
      telemetry.spansNamed('POST /v1/ask').find((span) => span.spanContext().traceId === traceId),
    );
    expect(server.kind).toBe(SpanKind.SERVER);
    expect(parentOf(server)).toBe('00f067aa0ba902b7');
    expect(server.attributes['hopline.tenant_id']).toBe(t.keys.alice.tenantId);
    const request = telemetry
      .spansNamed('hopline.qa.ask request')
      .find((span) => span.spanContext().traceId === traceId);
    expect(request && parentOf(request)).toBe(server.spanContext().spanId);
    const reasonerSide = telemetry
      .spansNamed('hopline.qa.ask process')
      .find((span) => span.spanContext().traceId === traceId);
    expect(reasonerSide && parentOf(reasonerSide)).toBe(request?.spanContext().spanId);
    // Question text stays out of span attributes.
    expect(JSON.stringify(telemetry.spans().map((span) => span.attributes))).not.toContain('Who owns Atlas');
  });

  it('a gRPC question is one trace from the AnswerGateway/Ask SERVER span to the qa.ask request', async () => {
    await using t = await startTestGateway();
    const client = new (loadHoplineGrpc().hopline.v1.AnswerGateway)(t.grpcAddress, grpc.credentials.createInsecure());
    const metadata = new grpc.Metadata();
    metadata.set('authorization', `Bearer ${t.keys.carol.key}`);
    const call = client.ask({ question: 'Who owns Atlas?' }, metadata);
    call.on('data', () => {});
    await new Promise((resolve) => call.on('end', resolve));
    client.close();
    const server = await waitFor(() => telemetry.spansNamed('hopline.v1.AnswerGateway/Ask')[0]);
    const request = telemetry
      .spansNamed('hopline.qa.ask request')
      .find((span) => span.spanContext().traceId === server.spanContext().traceId);
    expect(request && parentOf(request)).toBe(server.spanContext().spanId);
  });
});
