import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDocuments, readSse, type SseEvent } from '@hopline/cli';
import { startNats, waitFor } from '@hopline/test-support';
import { startCluster, type Cluster } from './cluster.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './otlp-receiver.js';

const demoCorpus = fileURLToPath(new URL('../../packages/embedded/demo-corpus/docs', import.meta.url));
const nats = await startNats();

interface KbCount {
  tenantId: string;
  kbId: string;
  lexicalChunks: number;
  vectorChunks: number;
}

describe.skipIf(!nats.url)('system - five services as five processes over NATS', () => {
  let cluster: Cluster;
  let receiver: OtlpReceiver;
  let events: Array<{ name: string; data: Record<string, unknown> }> = [];

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    cluster = await startCluster({
      natsUrl: nats.url as string,
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_BSP_SCHEDULE_DELAY: '100',
      },
    });
    const documents = loadDocuments(demoCorpus);
    const ingest = await fetch(`${cluster.gatewayUrl}/v1/kbs/demo/documents`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${cluster.apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ documents }),
    });
    expect(ingest.status).toBe(202);
    // The worker applies the durable stream asynchronously; its health report counts chunks per kb.
    await waitFor(
      async () => {
        const health = (await (
          await fetch(`http://127.0.0.1:${cluster.opsPorts['retrieval-worker']}/healthz`)
        ).json()) as { details: { kbs: KbCount[] } };
        const demo = health.details.kbs.find((kb) => kb.tenantId === 'acme' && kb.kbId === 'demo');
        return demo !== undefined && demo.lexicalChunks >= documents.length && demo.vectorChunks === demo.lexicalChunks;
      },
      { timeoutMs: 30_000, description: 'the demo corpus to be indexed' },
    );
  }, 120_000);

  afterAll(async () => {
    await cluster?.[Symbol.asyncDispose]();
    await receiver?.[Symbol.asyncDispose]();
    await nats[Symbol.asyncDispose]();
  });

  it('system - a question asked over HTTP SSE streams its hops and ends with a cited answer', async () => {
    const response = await fetch(`${cluster.gatewayUrl}/v1/ask`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${cluster.apiKey}`,
        'Content-Type': 'application/json',
        Accept: 'text/event-stream',
      },
      body: JSON.stringify({
        question: 'Which department does the owner of Project Atlas belong to?',
        kbIds: ['demo'],
        maxHops: 3,
      }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const received: SseEvent[] = [];
    for await (const event of readSse(response.body as ReadableStream<Uint8Array>)) received.push(event);
    events = received.map((event) => ({ name: event.event, data: JSON.parse(event.data) as Record<string, unknown> }));

    const names = events.map((event) => event.name);
    expect(names.slice(0, 2)).toEqual(['accepted', 'route']);
    expect(names.at(-1)).toBe('done');
    expect(names.filter((name) => name === 'done' || name === 'error')).toHaveLength(1);
    const firstHop = names.indexOf('hop_started');
    expect(firstHop).toBeGreaterThan(0);
    expect(names.indexOf('retrieval')).toBeGreaterThan(firstHop);
    expect(names.indexOf('hop_answer')).toBeGreaterThan(names.indexOf('retrieval'));
    expect(names.indexOf('token')).toBeGreaterThan(names.indexOf('hop_answer'));
    const ids = events.map((event) => Number(event.data.seq));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));

    const done = events.at(-1)?.data as {
      answer: string;
      citations: Array<Record<string, unknown>>;
      hops: number;
      stopReason: string;
    };
    expect(done.answer).toMatch(/Platform Engineering/);
    expect(done.answer).toMatch(/\[\d+\]/);
    expect(done.citations.length).toBeGreaterThan(0);
    for (const citation of done.citations) {
      expect(citation).toMatchObject({
        chunkId: expect.any(String),
        docId: expect.any(String),
        title: expect.any(String),
      });
    }
    expect(done.citations.map((citation) => citation.docId)).toEqual(expect.arrayContaining(['mira-chen']));
    expect(done.hops).toBeGreaterThanOrEqual(2);
  });

  it('trace - the question is one trace with spans of all five services, linked across NATS and gRPC', async () => {
    const questionId = String(events[0]?.data.questionId ?? '');
    expect(questionId).not.toBe('');
    const root = await waitFor(
      () =>
        receiver
          .spans()
          .find(
            (span) =>
              span.service === 'answer-gateway' &&
              span.attributes['hopline.question_id'] === questionId &&
              span.kind === 2,
          ),
      { timeoutMs: 15_000, description: 'the gateway span of the question' },
    );
    const expectedEdges = [
      'answer-gateway -> hop-reasoner',
      'hop-reasoner -> query-understanding',
      'hop-reasoner -> retrieval-worker',
      'hop-reasoner -> reranker',
      'hop-reasoner -> answer-gateway',
    ];
    const shape = () => {
      const spans = receiver.spans().filter((span) => span.traceId === root.traceId);
      const byId = new Map(spans.map((span) => [span.spanId, span]));
      const edges = new Set(
        spans
          .map((span): [ReceivedSpan | undefined, ReceivedSpan] => [byId.get(span.parentSpanId), span])
          .filter(([parent, child]) => parent !== undefined && parent.service !== child.service)
          .map(([parent, child]) => `${parent?.service} -> ${child.service}`),
      );
      const orphans = spans.filter(
        (span) => span !== root && span.spanId !== root.spanId && !byId.has(span.parentSpanId),
      );
      return { spans, byId, edges, orphans };
    };
    // Each process exports in its own batches: wait until every edge and every parent has arrived.
    const trace = await waitFor(
      () => {
        const current = shape();
        return expectedEdges.every((edge) => current.edges.has(edge)) && current.orphans.length === 0
          ? current
          : undefined;
      },
      { timeoutMs: 15_000, description: 'the whole trace to be exported' },
    ).catch(() => shape());
    const { spans, byId, edges, orphans } = trace;
    expect(new Set(spans.map((span) => span.service))).toEqual(
      new Set(['answer-gateway', 'hop-reasoner', 'query-understanding', 'retrieval-worker', 'reranker']),
    );
    expect([...edges].sort()).toEqual(expect.arrayContaining(expectedEdges));
    // Every span but the gateway's server span has its parent in the same trace.
    expect(orphans.map((span) => `${span.service}: ${span.name}`)).toEqual([]);
    // gRPC calls are CLIENT → SERVER pairs; NATS requests pair a CLIENT or PRODUCER with a SERVER or CONSUMER.
    const analyzeServer = spans.find((span) => span.service === 'query-understanding' && span.kind === 2);
    expect(byId.get(analyzeServer?.parentSpanId ?? '')?.kind).toBe(3);
  });
});
