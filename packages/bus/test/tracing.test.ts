import { randomUUID } from 'node:crypto';
import { subjects } from '@hopline/contracts';
import { instrument } from '@hopline/telemetry';
import { startNats, waitFor } from '@hopline/test-support';
import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connectNatsBus, createMemoryBroker, type Bus } from '../src/index.js';

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const contextManager = new AsyncLocalStorageContextManager();

beforeAll(() => {
  context.setGlobalContextManager(contextManager.enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
});

afterAll(async () => {
  await provider.shutdown();
  trace.disable();
  propagation.disable();
  context.disable();
});

const nats = await startNats();
afterAll(() => nats[Symbol.asyncDispose]());

const text = (value: string) => new TextEncoder().encode(value);
const SECRET = 'the question text must never reach a span';

function spanNamed(name: string): ReadableSpan {
  const span = exporter.getFinishedSpans().find((candidate) => candidate.name === name);
  if (span === undefined)
    throw new Error(
      `no span named "${name}" among ${exporter
        .getFinishedSpans()
        .map((s) => s.name)
        .join(', ')}`,
    );
  return span;
}

function expectChild(child: ReadableSpan, parent: ReadableSpan): void {
  expect(child.spanContext().traceId).toBe(parent.spanContext().traceId);
  expect(child.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
}

const adapters: Array<[string, (() => Promise<Bus>) | undefined]> = [
  [
    'memory',
    (() => {
      const broker = createMemoryBroker();
      return async () => broker.connect();
    })(),
  ],
  ['nats', nats.url === undefined ? undefined : () => connectNatsBus({ url: nats.url ?? '', name: 'bus-tracing' })],
];

describe.each(adapters)('bus tracing (%s)', (_adapter, connect) => {
  let opened: Bus[] = [];
  const bus = async () => {
    if (connect === undefined) throw new Error('adapter unavailable');
    const connection = await connect();
    opened.push(connection);
    return connection;
  };
  afterEach(async () => {
    await Promise.all(opened.map((connection) => connection.drain()));
    opened = [];
    exporter.reset();
  });

  it.skipIf(connect === undefined)(
    "trace - a request and its handler's nested request form one trace, client → server → client → server",
    async () => {
      const id = randomUUID().slice(0, 8);
      const [gateway, reasoner, worker] = [await bus(), await bus(), await bus()];
      await worker.serve({
        name: `worker-${id}`,
        version: '1.0.0',
        endpoints: [
          { name: 'retrieve', subject: `test.${id}.retrieve`, handle: async () => ({ data: text('chunks') }) },
        ],
      });
      await reasoner.serve({
        name: `reasoner-${id}`,
        version: '1.0.0',
        endpoints: [
          {
            name: 'ask',
            subject: `test.${id}.ask`,
            handle: async (request) =>
              instrument('hop 1', {}, async () =>
                reasoner.request(`test.${id}.retrieve`, request.data, { timeoutMs: 2_000 }),
              ),
          },
        ],
      });
      await instrument('question', {}, () => gateway.request(`test.${id}.ask`, text(SECRET), { timeoutMs: 2_000 }));

      const question = spanNamed('question');
      const askClient = spanNamed(`test.${id}.ask request`);
      const askServer = spanNamed(`test.${id}.ask process`);
      const hop = spanNamed('hop 1');
      const retrieveClient = spanNamed(`test.${id}.retrieve request`);
      const retrieveServer = spanNamed(`test.${id}.retrieve process`);
      expectChild(askClient, question);
      expectChild(askServer, askClient);
      expectChild(hop, askServer);
      expectChild(retrieveClient, hop);
      expectChild(retrieveServer, retrieveClient);
      expect([askClient.kind, askServer.kind]).toEqual([SpanKind.CLIENT, SpanKind.SERVER]);
      expect(askServer.attributes).toMatchObject({
        'messaging.system': 'nats',
        'messaging.destination.name': `test.${id}.ask`,
        'messaging.operation.type': 'process',
        'messaging.consumer.group.name': `reasoner-${id}`,
      });
      expect(askClient.attributes).toMatchObject({
        'messaging.operation.type': 'send',
        'messaging.operation.name': 'request',
      });
      for (const span of exporter.getFinishedSpans()) {
        expect(JSON.stringify(span.attributes)).not.toContain(SECRET);
      }
    },
  );

  it.skipIf(connect === undefined)(
    'trace - a published event is consumed in a CONSUMER span under the PRODUCER span, named by the subject template',
    async () => {
      const questionId = `q${randomUUID().replaceAll('-', '')}`;
      const [reasoner, gateway] = [await bus(), await bus()];
      let consumed = false;
      gateway.subscribe(subjects.events(questionId), {}, async () => {
        await instrument('render event', {}, async () => {
          consumed = true;
        });
      });
      await gateway.flush();
      await instrument('hop', {}, async () => reasoner.publish(subjects.events(questionId), text(SECRET)));
      await waitFor(() => consumed);
      await waitFor(() =>
        exporter.getFinishedSpans().some((span) => span.name === 'hopline.qa.{question}.events process'),
      );

      const hop = spanNamed('hop');
      const producer = spanNamed('hopline.qa.{question}.events publish');
      const consumer = spanNamed('hopline.qa.{question}.events process');
      expect([producer.kind, consumer.kind]).toEqual([SpanKind.PRODUCER, SpanKind.CONSUMER]);
      expectChild(producer, hop);
      expectChild(consumer, producer);
      expectChild(spanNamed('render event'), consumer);
      expect(producer.attributes['messaging.destination.name']).toBe('hopline.qa.{question}.events');
    },
  );

  it.skipIf(connect === undefined)(
    'trace - a durable message is processed under the span that published it',
    async () => {
      const id = randomUUID().replaceAll('-', '').slice(0, 12);
      const connection = await bus();
      const stream = await connection.durableStream({ name: `TRACE_${id}`, subjects: [`test.${id}.kb.*.*.ingest`] });
      await instrument('ingest request', {}, () =>
        stream.publish(`test.${id}.kb.t1.kb1.ingest`, text(SECRET), { msgId: 'doc:1' }),
      );
      await stream.consume(
        { durable: `indexer-${id}`, filterSubject: `test.${id}.kb.*.*.ingest`, maxDeliver: 3, ackWaitMs: 5_000 },
        async () => ({ kind: 'ack' }),
      );
      await waitFor(() =>
        exporter.getFinishedSpans().some((span) => span.name === `test.${id}.kb.t1.kb1.ingest process`),
      );

      const producer = spanNamed(`test.${id}.kb.t1.kb1.ingest publish`);
      const consumer = spanNamed(`test.${id}.kb.t1.kb1.ingest process`);
      expectChild(producer, spanNamed('ingest request'));
      expectChild(consumer, producer);
      expect(consumer.attributes).toMatchObject({ 'hopline.settlement': 'ack', 'messaging.message.delivery_count': 1 });
    },
  );

  it.skipIf(connect === undefined)(
    'trace - an endpoint failure marks the server span as an error and the client span too',
    async () => {
      const id = randomUUID().slice(0, 8);
      const [client, server] = [await bus(), await bus()];
      await server.serve({
        name: `failing-${id}`,
        version: '1.0.0',
        endpoints: [
          {
            name: 'fail',
            subject: `test.${id}.fail`,
            handle: async () => {
              throw new Error('index offline');
            },
          },
        ],
      });
      await expect(client.request(`test.${id}.fail`, text(''), { timeoutMs: 2_000 })).rejects.toThrow('index offline');
      expect(spanNamed(`test.${id}.fail process`).status.code).toBe(SpanStatusCode.ERROR);
      expect(spanNamed(`test.${id}.fail request`).status.code).toBe(SpanStatusCode.ERROR);
    },
  );
});
