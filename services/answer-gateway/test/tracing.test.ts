import * as grpc from '@grpc/grpc-js';
import { loadHoplineGrpc, subjects } from '@hopline/contracts';
import { startTestTelemetry } from '@hopline/telemetry/testing';
import { waitFor } from '@hopline/test-support';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { afterAll, describe, expect, it } from 'vitest';
import { twoHopScript } from './support/fake-reasoner.js';
import { askJson, askSse, startTestGateway } from './support/harness.js';

const telemetry = startTestTelemetry('answer-gateway');
afterAll(() => telemetry.shutdown());

type ReadableSpan = ReturnType<typeof telemetry.spans>[number];
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

describe('answer-gateway traces', () => {
  it('an SSE question is one trace: the client’s traceparent → the gateway SERVER span → the job publish → the reasoner → the events back', async () => {
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
    const enqueued = telemetry
      .spansNamed('hopline.qa.{question}.ask publish')
      .find((span) => span.spanContext().traceId === traceId);
    expect(enqueued?.kind).toBe(SpanKind.PRODUCER);
    expect(enqueued && parentOf(enqueued)).toBe(server.spanContext().spanId);
    const reasonerSide = telemetry
      .spansNamed('hopline.qa.{question}.ask process')
      .find((span) => span.spanContext().traceId === traceId);
    expect(reasonerSide && parentOf(reasonerSide)).toBe(enqueued?.spanContext().spanId);
    // Each event the reasoner writes is received by the gateway in the same trace.
    const written = new Set(
      telemetry
        .spansNamed('hopline.qa.{question}.events publish')
        .filter(
          (span) => span.spanContext().traceId === traceId && parentOf(span) === reasonerSide?.spanContext().spanId,
        )
        .map((span) => span.spanContext().spanId),
    );
    const received = await waitFor(() =>
      telemetry
        .spansNamed('hopline.qa.{question}.events receive')
        .filter((span) => span.spanContext().traceId === traceId),
    );
    expect(received.length).toBeGreaterThan(0);
    expect(received.every((span) => span.kind === SpanKind.CONSUMER && written.has(parentOf(span) ?? ''))).toBe(true);
    // Question text stays out of span attributes.
    expect(JSON.stringify(telemetry.spans().map((span) => span.attributes))).not.toContain('Who owns Atlas');
  });

  it('a question past its deadline: the JSON ask answers 504 in an ERROR span typed 504, the SSE ask’s span is ERROR typed deadline_exceeded', async () => {
    // The hop-reasoner stand-in holds every question at its gate until the test releases it:
    // nothing answers before the deadline, however fast or slow the machine.
    await using t = await startTestGateway({
      config: { QUESTION_TIMEOUT_MS: 1_000 },
      script: twoHopScript({ gated: true }),
    });
    const asked = await askJson(t.baseUrl, t.keys.alice, { question: 'Who owns Atlas?' });
    expect(asked.status).toBe(504);
    const jsonQuestion = asked.headers.get('hopline-question-id');
    const stream = await askSse(t.baseUrl, t.keys.alice, { question: 'Who owns Atlas, streamed?' });
    await stream.ended;
    expect(stream.events.at(-1)).toMatchObject({ name: 'error', data: { code: 'deadline_exceeded' } });
    const sseQuestion = String(stream.events[0]?.data.questionId);

    const askSpan = (questionId: string | null) =>
      waitFor(() =>
        telemetry.spansNamed('POST /v1/ask').find((span) => span.attributes['hopline.question_id'] === questionId),
      );
    const response = await askSpan(jsonQuestion);
    expect(response.kind).toBe(SpanKind.SERVER);
    expect(response.status.code).toBe(SpanStatusCode.ERROR);
    expect(response.attributes).toMatchObject({ 'http.response.status_code': 504, 'error.type': '504' });
    const streamed = await askSpan(sseQuestion);
    expect(streamed.status.code).toBe(SpanStatusCode.ERROR);
    expect(streamed.attributes).toMatchObject({ 'http.response.status_code': 200, 'error.type': 'deadline_exceeded' });
    // Both ended by the deadline, not by the stand-in: it still held them at its gate.
    expect(t.reasoner.record(sseQuestion)?.cancel?.reason).toBe('deadline');
  });

  it('requests refused before a handler runs (401, 413, 415, 400 from validation) and unknown paths each have a SERVER span with their status, in the client’s trace', async () => {
    await using t = await startTestGateway({ config: { MAX_BODY_BYTES: 1_024 } });
    const refusals: Array<{
      name: string;
      status: number;
      headers: Record<string, string>;
      body?: string;
      path?: string;
      method?: string;
    }> = [
      { name: 'POST /v1/ask', status: 401, headers: { 'Content-Type': 'application/json' }, body: '{}' },
      {
        name: 'POST /v1/ask',
        status: 413,
        headers: { Authorization: `Bearer ${t.keys.alice.key}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ question: 'x'.repeat(2_048) }),
      },
      {
        name: 'POST /v1/ask',
        status: 415,
        headers: { Authorization: `Bearer ${t.keys.alice.key}`, 'Content-Type': 'text/plain' },
        body: 'Who owns Atlas?',
      },
      {
        name: 'POST /v1/ask',
        status: 400,
        headers: { Authorization: `Bearer ${t.keys.alice.key}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ question: 42 }),
      },
      { name: 'GET', status: 404, headers: {}, path: '/v1/no-such-thing/5f0c', method: 'GET' },
    ];
    for (const [index, refusal] of refusals.entries()) {
      const traceId = `4bf92f3577b34da6a3ce929d0e0e47${String(index).padStart(2, '0')}`;
      const response = await fetch(`${t.baseUrl}${refusal.path ?? '/v1/ask'}`, {
        method: refusal.method ?? 'POST',
        headers: { ...refusal.headers, traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
        ...(refusal.body === undefined ? {} : { body: refusal.body }),
      });
      expect(response.status, refusal.name).toBe(refusal.status);
      const span = await waitFor(() => telemetry.spans().find((ended) => ended.spanContext().traceId === traceId));
      expect(span.name).toBe(refusal.name);
      expect(span.kind).toBe(SpanKind.SERVER);
      expect(parentOf(span)).toBe('00f067aa0ba902b7');
      expect(span.attributes['http.response.status_code']).toBe(refusal.status);
      // A client's mistake is not the gateway's failure (OpenTelemetry's HTTP conventions).
      expect(span.status.code).toBe(SpanStatusCode.UNSET);
    }
    expect(t.reasoner.asks).toHaveLength(0);
  });

  it('a gRPC question is one trace from the AnswerGateway/Ask SERVER span to the job publish', async () => {
    await using t = await startTestGateway();
    const client = new (loadHoplineGrpc().hopline.v1.AnswerGateway)(t.grpcAddress, grpc.credentials.createInsecure());
    const metadata = new grpc.Metadata();
    metadata.set('authorization', `Bearer ${t.keys.carol.key}`);
    const call = client.ask({ question: 'Who owns Atlas?' }, metadata);
    call.on('data', () => {});
    await new Promise((resolve) => call.on('end', resolve));
    client.close();
    const server = await waitFor(() => telemetry.spansNamed('hopline.v1.AnswerGateway/Ask')[0]);
    const enqueued = telemetry
      .spansNamed('hopline.qa.{question}.ask publish')
      .find((span) => span.spanContext().traceId === server.spanContext().traceId);
    expect(enqueued && parentOf(enqueued)).toBe(server.spanContext().spanId);
  });

  it('a client’s W3C baggage stops at the edge: its traceparent is followed, but its baggage names no span and travels in no message', async () => {
    await using t = await startTestGateway();
    const baggage = 'hopline.question_id=victim-question-id,padding=xxxxxxxx';
    const traceId = '5bf92f3577b34da6a3ce929d0e0e4736';
    const response = await fetch(`${t.baseUrl}/v1/kbs/projects/documents`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${t.keys.alice.key}`,
        'Content-Type': 'application/json',
        traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
        baggage,
      },
      body: JSON.stringify({ docId: 'atlas', text: 'Atlas is owned by Dana.' }),
    });
    expect(response.status).toBe(202);
    const httpServer = await waitFor(() =>
      telemetry.spansNamed('POST /v1/kbs/{kb}/documents').find((span) => span.spanContext().traceId === traceId),
    );
    expect(httpServer.attributes['hopline.question_id']).toBeUndefined();
    const stored = await (await t.peerBus.durableStream()).last(subjects.ingest(t.keys.alice.tenantId, 'projects'));
    expect(stored?.headers?.traceparent).toContain(traceId);
    expect(JSON.stringify(stored?.headers)).not.toContain('victim-question-id');

    const client = new (loadHoplineGrpc().hopline.v1.AnswerGateway)(t.grpcAddress, grpc.credentials.createInsecure());
    const metadata = new grpc.Metadata();
    metadata.set('authorization', `Bearer ${t.keys.carol.key}`);
    metadata.set('baggage', baggage);
    const call = client.ask({ question: 'Who owns Atlas?' }, metadata);
    call.on('data', () => {});
    await new Promise((resolve) => call.on('end', resolve));
    client.close();
    const grpcServer = await waitFor(() => telemetry.spansNamed('hopline.v1.AnswerGateway/Ask')[0]);
    expect(grpcServer.attributes['hopline.question_id']).not.toBe('victim-question-id');
    const job = t.reasoner.asks.at(-1);
    expect(JSON.stringify(job)).not.toContain('victim');
  });
});
