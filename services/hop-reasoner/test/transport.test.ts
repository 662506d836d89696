import { describe, expect, it } from 'vitest';
import { createMemoryBroker } from '@hopline/bus';
import { codecs, loadHoplineGrpc, subjects, type Chunk__Output, type RerankResponse } from '@hopline/contracts';
import { createClient, createGrpcServer } from '@hopline/grpc';
import type { CallContext } from '@hopline/reasoning';
import { createGuard } from '@hopline/resilience';
import { createLogger, createMetrics } from '@hopline/telemetry';
import { freePort, waitFor } from '@hopline/test-support';
import { createAnalyzerClient } from '../src/clients/analyzer-client.js';
import { createRerankerClient } from '../src/clients/reranker-client.js';
import { createRetrieverClient } from '../src/clients/retriever-client.js';
import { WorkerDirectory } from '../src/clients/worker-directory.js';

const logger = createLogger('hop-reasoner-test', { level: 'silent' });
const metrics = createMetrics('hop-reasoner-test', { defaultMetrics: false });
const breaker = {
  errorThresholdPercentage: 50,
  volumeThreshold: 2,
  resetTimeoutMs: 60_000,
  rollingCountTimeoutMs: 10_000,
};

const callContext = (signal = new AbortController().signal): CallContext => ({
  request: {
    questionId: 'q1',
    scope: { tenantId: 'acme', userId: 'u', kbIds: ['docs'], docIds: [] },
    deadlineUnixMs: Date.now() + 5_000,
  },
  deadlineUnixMs: Date.now() + 5_000,
  signal,
});

describe('hop-reasoner transports', () => {
  it('retriever client - no worker listening fails fast as no_responders, and repeated failures open the breaker', async () => {
    const bus = createMemoryBroker().connect();
    const guard = createGuard({ downstream: 'retrieval-worker', breaker });
    const workers = await WorkerDirectory.start(bus);
    const retriever = createRetrieverClient({ bus, guard, workers, budgetMs: 2_000 });
    const input = { query: 'q', hydeText: '', topK: 5, hop: 1, seeds: [] };
    await expect(retriever.retrieve(input, callContext())).rejects.toMatchObject({
      code: 'no_responders',
      message: 'no retrieval worker is running',
    });
    await expect(retriever.retrieve(input, callContext())).rejects.toMatchObject({ code: 'no_responders' });
    await expect(retriever.retrieve(input, callContext())).rejects.toMatchObject({
      code: 'breaker_open',
      message: 'retrieval failed repeatedly and is skipped until it recovers',
    });
    expect(guard.state).toBe('open');
    guard.shutdown();
  });

  it("retriever client - the hop's seeds travel to the worker, and a worker without a graph is answered all the same", async () => {
    const bus = createMemoryBroker().connect();
    const received: string[][] = [];
    await bus.serve({
      name: 'graphless',
      version: '0.1.0',
      endpoints: [
        {
          name: 'retrieve',
          subject: subjects.retrieve,
          handle: async (message) => {
            received.push(codecs.retrieveRequest.decode(message.data).seeds);
            return {
              data: codecs.retrieveResponse.encode({ chunks: [], workerId: 'w1', noGraphReason: 'no graph here' }),
            };
          },
        },
      ],
    });
    const guard = createGuard({ downstream: 'retrieval-worker', breaker });
    const workers = await WorkerDirectory.start(bus);
    const retriever = createRetrieverClient({ bus, guard, workers, budgetMs: 2_000 });
    const seeds = ['Who founded Northwind Labs?', 'Carol Vance'];
    const result = await retriever.retrieve({ query: 'q', hydeText: '', topK: 5, hop: 2, seeds }, callContext());
    expect(received).toEqual([seeds]);
    expect(result).toEqual({ chunks: [], degraded: false, degradedReasons: [] });
    guard.shutdown();
  });

  it('retriever client - a slow worker times out at the deadline instead of hanging the question', async () => {
    const bus = createMemoryBroker().connect();
    await bus.serve({
      name: 'slow',
      version: '0.1.0',
      endpoints: [{ name: 'retrieve', subject: subjects.retrieve, handle: () => new Promise(() => undefined) }],
    });
    const guard = createGuard({ downstream: 'retrieval-worker', breaker });
    const workers = await WorkerDirectory.start(bus);
    const retriever = createRetrieverClient({ bus, guard, workers, budgetMs: 2_000 });
    const ctx = { ...callContext(), deadlineUnixMs: Date.now() + 150 };
    const started = Date.now();
    await expect(
      retriever.retrieve({ query: 'q', hydeText: '', topK: 5, hop: 1, seeds: [] }, ctx),
    ).rejects.toMatchObject({
      code: 'deadline_exceeded',
    });
    expect(Date.now() - started).toBeLessThan(2_000);
    guard.shutdown();
  });

  it('retriever client - a worker that stops answering costs a hedge delay: the retrieval is answered by another worker', async () => {
    const broker = createMemoryBroker();
    const bus = broker.connect();
    const workersBus = broker.connect();
    const answer = (workerId: string) => async () => ({
      data: codecs.retrieveResponse.encode({ chunks: [], degraded: false, degradedReasons: [], workerId }),
    });
    await workersBus.serve({
      name: 'retrieval-worker',
      version: '0.1.0',
      endpoints: [
        { name: 'frozen', subject: subjects.retrieveAt('frozen'), handle: () => new Promise(() => undefined) },
        { name: 'healthy', subject: subjects.retrieveAt('healthy'), handle: answer('healthy') },
      ],
    });
    const workers = await WorkerDirectory.start(bus);
    for (const workerId of ['frozen', 'healthy'])
      workersBus.publish(subjects.retrievalPresence, codecs.workerPresence.encode({ workerId, ingestLag: 0 }));
    await waitFor(() => workers.live.length === 2);
    const guard = createGuard({ downstream: 'retrieval-worker', breaker });
    const retriever = createRetrieverClient({ bus, guard, workers, budgetMs: 2_000, minHedgeDelayMs: 20 });
    const input = { query: 'q', hydeText: '', topK: 5, hop: 1, seeds: [] };
    // Half of first attempts would go to the frozen worker; every retrieval must still be answered.
    for (let i = 0; i < 12; i += 1) await expect(retriever.retrieve(input, callContext())).resolves.toBeDefined();
    expect(guard.stats()).toMatchObject({ successes: 12, failures: 0 });
    workers.stop();
    guard.shutdown();
  });

  it('reranker client - a reranker that does not answer within its budget falls back to the fused order, and two timeouts open its breaker', async () => {
    const server = createGrpcServer({ logger, metrics });
    server.addService(loadHoplineGrpc().hopline.v1.Reranker, { Rerank: () => new Promise(() => undefined) });
    const port = await server.listen('127.0.0.1', 0);
    const client = createClient(loadHoplineGrpc().hopline.v1.Reranker, `127.0.0.1:${port}`);
    const guard = createGuard({
      downstream: 'reranker',
      breaker: { ...breaker, volumeThreshold: 10, consecutiveFailures: 2 },
    });
    const reranker = createRerankerClient({ client, guard, budgetMs: 200, metrics });
    const chunks = ['a', 'b', 'c'].map((chunkId) => ({ chunkId }) as Chunk__Output);
    for (let i = 0; i < 2; i += 1) {
      const result = await reranker.rerank({ query: 'q', chunks, topN: 2 }, callContext());
      expect(result).toMatchObject({
        fallback: true,
        fallbackReason: 'the reranker did not answer within 200 ms; the chunks keep their retrieval order',
      });
      expect(result.chunks.map((chunk) => chunk.chunkId)).toEqual(['a', 'b']);
    }
    expect(guard.state).toBe('open');
    const skipped = await reranker.rerank({ query: 'q', chunks, topN: 2 }, callContext());
    expect(skipped.fallbackReason).toBe(
      'the reranker failed repeatedly and is skipped until it recovers; the chunks keep their retrieval order',
    );
    guard.shutdown();
    client.close();
    await server.shutdown({ graceMs: 0 });
  });

  it('reranker client - it asks for positions and rebuilds the kept chunks from those it sent; a reranker that predates positions sends them whole', async () => {
    const sent = [
      { chunkId: 'a', text: 'The lighthouse keeper rows to town.', span: { start: 10, end: 45 }, scores: { bm25: 2 } },
      { chunkId: 'b', text: 'The harbour freezes in winter.', span: { start: 0, end: 30 }, scores: { bm25: 1 } },
      { chunkId: 'c', text: 'Gulls nest on the pier.', span: { start: 5, end: 28 }, scores: { rrf: 0.5 } },
    ] as Chunk__Output[];
    const replies = {
      byPosition: {
        ranked: [
          { position: 2, rerankScore: 0.9 },
          { position: 0, rerankScore: 0.4, textLength: 15 },
        ],
        scorer: 'lexical',
      },
      whole: { chunks: [{ ...sent[1], scores: { bm25: 1, rerank: 0.7 } }] as Chunk__Output[], scorer: 'lexical' },
      outOfRange: { ranked: [{ position: 3, rerankScore: 0.9 }], scorer: 'lexical' },
    };
    let reply: RerankResponse = replies.byPosition;
    const asked: boolean[] = [];
    const server = createGrpcServer({ logger, metrics });
    server.addService(loadHoplineGrpc().hopline.v1.Reranker, {
      Rerank: async (request) => {
        asked.push(request.replyByPosition);
        return reply;
      },
    });
    const port = await server.listen('127.0.0.1', 0);
    const client = createClient(loadHoplineGrpc().hopline.v1.Reranker, `127.0.0.1:${port}`);
    const guard = createGuard({ downstream: 'reranker', breaker });
    const reranker = createRerankerClient({ client, guard, budgetMs: 2_000, metrics });
    try {
      const byPosition = await reranker.rerank({ query: 'q', chunks: sent, topN: 2 }, callContext());
      expect(byPosition).toEqual({
        chunks: [
          { ...sent[2], scores: { rrf: 0.5, rerank: 0.9 } },
          { ...sent[0], text: 'The lighthouse ', span: { start: 10, end: 25 }, scores: { bm25: 2, rerank: 0.4 } },
        ],
        fallback: false,
      });
      reply = replies.whole;
      const whole = await reranker.rerank({ query: 'q', chunks: sent, topN: 2 }, callContext());
      expect(whole.chunks).toEqual([
        expect.objectContaining({ chunkId: 'b', scores: expect.objectContaining({ bm25: 1, rerank: 0.7 }) }),
      ]);
      reply = replies.outOfRange;
      const malformed = await reranker.rerank({ query: 'q', chunks: sent, topN: 2 }, callContext());
      expect(malformed.fallback).toBe(true);
      expect(malformed.chunks.map((chunk) => chunk.chunkId)).toEqual(['a', 'b']);
      expect(asked).toEqual([true, true, true]);
    } finally {
      guard.shutdown();
      client.close();
      await server.shutdown({ graceMs: 0 });
    }
  });

  it('reranker client - a reranker that is down leaves the fused order in place, flagged as a fallback', async () => {
    const port = await freePort();
    const client = createClient(loadHoplineGrpc().hopline.v1.Reranker, `127.0.0.1:${port}`);
    const guard = createGuard({ downstream: 'reranker', breaker });
    const reranker = createRerankerClient({ client, guard, budgetMs: 1_000, metrics });
    const chunks = ['a', 'b', 'c'].map((chunkId) => ({ chunkId }) as Chunk__Output);
    const result = await reranker.rerank({ query: 'q', chunks, topN: 2 }, callContext());
    expect(result.fallback).toBe(true);
    expect(result.fallbackReason).toBe('the reranker could not be reached; the chunks keep their retrieval order');
    expect(result.chunks.map((chunk) => chunk.chunkId)).toEqual(['a', 'b']);
    guard.shutdown();
    client.close();
  });

  it('analyzer client - a cancelled question cancels the Analyze call instead of falling back', async () => {
    const port = await freePort();
    const client = createClient(loadHoplineGrpc().hopline.v1.QueryUnderstanding, `127.0.0.1:${port}`);
    const guard = createGuard({ downstream: 'query-understanding', breaker });
    const analyzer = createAnalyzerClient({ client, guard, budgetMs: 1_000 });
    const abort = new AbortController();
    abort.abort();
    await expect(analyzer.analyze('Who?', callContext(abort.signal))).rejects.toMatchObject({ code: 'cancelled' });
    guard.shutdown();
    client.close();
  });
});
