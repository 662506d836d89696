import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDocuments, readSse, type SseEvent } from '@hopline/cli';
import { startNats, startScriptedOpenAiServer, waitFor, type ScriptedOpenAiServer } from '@hopline/test-support';
import { observedSeries } from '../deploy/support/observed-series.js';
import { SERVICES, startCluster, type Cluster, type ServiceName } from './cluster.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './otlp-receiver.js';
import { parseExposition, type Sample } from './scrape.js';

/**
 * Series the alerts or the dashboard read that no Hopline service exports or that this run
 * cannot produce, each with the reason. Anything else they read must have samples.
 */
const NOT_FROM_THIS_RUN: Array<[RegExp, string]> = [
  [/^jetstream_/, "the NATS chart's exporter exports it, not a Hopline service"],
];

const demoCorpus = fileURLToPath(new URL('../../packages/embedded/demo-corpus/docs', import.meta.url));
const nats = await startNats();

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
    // The worker applies the durable stream asynchronously; its readiness report counts the chunks of its index.
    await waitFor(
      async () => {
        const health = (await (
          await fetch(`http://127.0.0.1:${cluster.opsPorts['retrieval-worker']}/readyz`)
        ).json()) as { details: { index: { lexicalChunks: number; vectorChunks: number } } };
        const { lexicalChunks, vectorChunks } = health.details.index;
        return lexicalChunks >= documents.length && vectorChunks === lexicalChunks;
      },
      { timeoutMs: 30_000, description: 'the demo corpus to be indexed' },
    );
  }, 240_000);

  const ask = async (question: string): Promise<void> => {
    const response = await fetch(`${cluster.gatewayUrl}/v1/ask`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${cluster.apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ question, kbIds: ['demo'], maxHops: 3 }),
    });
    expect(response.status, await response.clone().text()).toBe(200);
    await response.json();
  };

  const scrape = async (services: readonly ServiceName[]): Promise<Sample[]> =>
    (
      await Promise.all(
        services.map(async (name) =>
          parseExposition(await (await fetch(`http://127.0.0.1:${cluster.opsPorts[name]}/metrics`)).text()),
        ),
      )
    ).flat();

  let model: ScriptedOpenAiServer | undefined;

  afterAll(async () => {
    await cluster?.[Symbol.asyncDispose]();
    await model?.close();
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

    // Every stage has a span, in the service that runs it.
    const stages = new Set(spans.map((span) => `${span.service}: ${span.name}`));
    for (const stage of [
      'answer-gateway: answer cache lookup',
      'retrieval-worker: bm25 search',
      'retrieval-worker: vector search',
      'retrieval-worker: fusion',
      'hop-reasoner: rerank',
      'reranker: rerank score',
      'reranker: mmr',
      'hop-reasoner: extract hop answer',
      'hop-reasoner: synthesis',
    ]) {
      expect(stages, stage).toContain(stage);
    }
    // The question id travels as baggage: every span of the question carries it.
    expect(
      spans.filter((span) => span.attributes['hopline.question_id'] !== questionId).map((span) => span.name),
    ).toEqual([]);
    // On failure, the answer's degradedReasons say why the hop was degraded.
    expect(
      spans.find((span) => span.name === 'hop')?.attributes,
      JSON.stringify(events.at(-1)?.data.degradedReasons),
    ).toMatchObject({ 'hopline.degraded': false });
  });

  // Last: it gives the hop-reasoner a model and stops the reranker, so that the model's series,
  // the degraded path and an opening breaker are recorded too.
  it('metrics - every series and label the alerts and the dashboard read has samples once questions ran, the model and the degraded path included', async () => {
    // A scripted model server: its first request fails (an error to count), the others answer
    // with text and usage (tokens to count) that the reasoner may use or fall back from.
    model = await startScriptedOpenAiServer();
    model.setRule((_body, index) => (index === 0 ? { status: 500 } : { content: 'Mira Chen [1]' }));
    await cluster.restart('hop-reasoner', { OPENAI_BASE_URL: model.baseURL });
    await ask('Who owns Project Atlas?');
    expect(model.requests.length).toBeGreaterThan(1);
    // The reranker's own series are read before it goes.
    const rerankerSamples = await scrape(['reranker']);
    await cluster.kill('reranker');
    // Hops whose reranks fail: degraded answers, and the hop-reasoner's breaker to the reranker opens.
    await ask('Which department is the owner of Project Atlas part of?');
    await ask('Which department does the owner of Project Atlas belong to, and since when?');

    const samples = [...rerankerSamples, ...(await scrape(SERVICES.filter((name) => name !== 'reranker')))];
    const observed = observedSeries().filter(
      (series) => !NOT_FROM_THIS_RUN.some(([pattern]) => pattern.test(series.metric)),
    );
    expect(observed.length).toBeGreaterThan(10);
    const missing = observed.flatMap((series) => {
      const found = samples.filter((sample) => sample.metric === series.metric);
      const readers = [...series.readers].join(', ');
      if (found.length === 0) return [`${series.metric} has no samples (read by ${readers})`];
      return [...series.labels]
        .filter((label) => !found.some((sample) => label in sample.labels))
        .map((label) => `${series.metric} has no sample labelled ${label} (read by ${readers})`);
    });
    expect(missing).toEqual([]);

    // What the rules compare: retrievals the workers served, by subject template, and the breaker that opened.
    const value = (metric: string, labels: Record<string, string>) =>
      samples
        .filter(
          (sample) =>
            sample.metric === metric && Object.entries(labels).every(([name, text]) => sample.labels[name] === text),
        )
        .reduce((sum, sample) => sum + sample.value, 0);
    expect(
      value('hopline_nats_requests_total', { role: 'server', subject: 'hopline.retrieve.worker.{worker}' }) +
        value('hopline_nats_requests_total', { role: 'server', subject: 'hopline.retrieve' }),
    ).toBeGreaterThan(0);
    expect(value('hopline_degraded_retrievals_total', { service: 'hop-reasoner', path: 'rerank' })).toBeGreaterThan(0);
    expect(value('hopline_breaker_transitions_total', { downstream: 'reranker', to: 'open' })).toBeGreaterThan(0);
    expect(value('hopline_hop_duration_seconds_count', { service: 'hop-reasoner' })).toBeGreaterThan(0);

    // A rerank the open breaker skipped made no gRPC call, yet its span says so.
    const skipped = await waitFor(
      () =>
        receiver
          .spans()
          .find(
            (span) =>
              span.name === 'rerank' &&
              span.attributes['hopline.breaker.state'] === 'open' &&
              span.events.includes('rerank skipped: breaker open'),
          ),
      { timeoutMs: 15_000, description: 'the span of a rerank the breaker skipped' },
    );
    expect(skipped.attributes).toMatchObject({ 'hopline.degraded': true, 'error.type': 'breaker_open' });
    // A hop-reasoner restarted as a process takes its time on a busy machine.
  }, 180_000);
});
