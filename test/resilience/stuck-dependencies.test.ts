// Faults with real processes and real signals: a retrieval worker or the reranker frozen with
// SIGSTOP, the reranker killed and started again. The hop-reasoner's own clients, breakers and
// budgets (as its service wires them) face the real services over NATS and gRPC.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectNatsBus } from '@hopline/bus';
import { codecs, loadHoplineGrpc, subjects, type Chunk__Output } from '@hopline/contracts';
import { createClient } from '@hopline/grpc';
import type { CallContext } from '@hopline/reasoning';
import { createGuard, DEFAULT_BREAKER, type BreakerState } from '@hopline/resilience';
import { freePort, startNats, waitFor } from '@hopline/test-support';
import { afterAll, describe, expect, it } from 'vitest';
import { createRerankerClient } from '../../services/hop-reasoner/src/clients/reranker-client.js';
import { createRetrieverClient } from '../../services/hop-reasoner/src/clients/retriever-client.js';
import { WorkerDirectory } from '../../services/hop-reasoner/src/clients/worker-directory.js';
import { startServiceProcess } from '../support/service-process.js';

const nats = await startNats();
afterAll(() => nats[Symbol.asyncDispose]());

const context = (): CallContext => ({
  request: {
    questionId: 'fault-q',
    scope: { tenantId: 'acme', userId: 'u', kbIds: ['docs'], docIds: [] },
    deadlineUnixMs: Date.now() + 30_000,
  },
  deadlineUnixMs: Date.now() + 30_000,
  signal: new AbortController().signal,
});

const chunk = (id: string, text: string): Chunk__Output => ({
  chunkId: id,
  tenantId: 'acme',
  kbId: 'docs',
  docId: id,
  docVersion: 1,
  title: id,
  text,
  span: { start: 0, end: text.length },
  dedupeKey: id,
  scores: null,
  foundBy: 'BM25',
  hop: 1,
  effectiveDate: '',
  sourceUri: '',
});
const chunks = [
  chunk('weather', 'It rained all week in the harbour town.'),
  chunk('atlas', 'Project Atlas is owned by Mira Chen.'),
  chunk('budget', 'The budget was approved in March.'),
];

/** The breaker the hop-reasoner service gives each downstream, with this test's reset period. */
const serviceBreaker = (resetTimeoutMs: number) => ({ ...DEFAULT_BREAKER, resetTimeoutMs, consecutiveFailures: 2 });

describe.skipIf(!nats.url)('faults with real processes', () => {
  it('fault - two workers on one host without WORKER_ID both index every document; with one frozen (SIGSTOP) every retrieval is answered by the other', async () => {
    const url = nats.url as string;
    const dirs = [mkdtempSync(join(tmpdir(), 'fault-worker-')), mkdtempSync(join(tmpdir(), 'fault-worker-'))];
    const processes = await Promise.all(
      dirs.map((dir) => startServiceProcess('retrieval-worker', { NATS_URL: url, DATA_DIR: dir })),
    );
    const bus = await connectNatsBus({ url, name: 'fault-test' });
    const guard = createGuard({ downstream: 'retrieval-worker', breaker: serviceBreaker(1_000) });
    const workers = await WorkerDirectory.start(bus);
    const [frozen] = processes;
    try {
      const stream = await bus.durableStream();
      for (let i = 0; i < 10; i += 1) {
        const text = `Document number ${i} is about topic-${i}.`;
        await stream.publish(
          subjects.ingest('acme', 'docs'),
          codecs.ingestCommand.encode({
            upsert: { tenantId: 'acme', kbId: 'docs', docId: `doc-${i}`, version: 1, title: `doc ${i}`, text },
          }),
          { msgId: `fault/doc-${i}` },
        );
      }
      const indexed = async (opsUrl: string) => {
        const health = (await (await fetch(`${opsUrl}/readyz`)).json()) as {
          details: { index?: { lexicalChunks: number } };
        };
        return health.details.index?.lexicalChunks ?? 0;
      };
      await waitFor(async () => (await Promise.all(processes.map((p) => indexed(p.opsUrl)))).every((n) => n === 10), {
        timeoutMs: 30_000,
        description: 'both workers to index all ten documents',
      });
      await waitFor(() => workers.live.length === 2, { description: 'both workers to announce themselves' });

      const retriever = createRetrieverClient({ bus, guard, workers, budgetMs: 2_000 });
      frozen?.signal('SIGSTOP');
      for (let i = 0; i < 20; i += 1) {
        const result = await retriever.retrieve(
          { query: `topic-${i % 10}`, hydeText: '', topK: 3, hop: 1, seeds: [] },
          context(),
        );
        expect(result.chunks[0]?.docId).toBe(`doc-${i % 10}`);
      }
      expect(guard.stats()).toMatchObject({ successes: 20, failures: 0 });
    } finally {
      frozen?.signal('SIGCONT');
      workers.stop();
      guard.shutdown();
      await bus.drain();
      for (const process of processes) await process.kill();
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('fault - a frozen reranker (SIGSTOP) costs a call its budget, opens the breaker within two failures, and answers keep the fused order', async () => {
    const port = await freePort();
    const reranker = await startServiceProcess('reranker', { GRPC_HOST: '127.0.0.1', GRPC_PORT: String(port) });
    const client = createClient(loadHoplineGrpc().hopline.v1.Reranker, `127.0.0.1:${port}`);
    const guard = createGuard({ downstream: 'reranker', breaker: serviceBreaker(60_000) });
    const rerank = createRerankerClient({ client, guard, budgetMs: 500 });
    const input = { query: 'Who owns Project Atlas?', chunks, topN: 3 };
    try {
      const ranked = await rerank.rerank(input, context());
      expect(ranked.fallback).toBe(false);
      expect(ranked.chunks[0]?.chunkId).toBe('atlas');

      reranker.signal('SIGSTOP');
      const reasons: string[] = [];
      for (let i = 0; i < 4; i += 1) {
        const result = await rerank.rerank(input, context());
        expect(result.fallback).toBe(true);
        expect(result.chunks.map((c) => c.chunkId)).toEqual(['weather', 'atlas', 'budget']);
        reasons.push(result.fallbackReason ?? '');
      }
      expect(guard.state).toBe('open');
      expect(guard.stats().failures).toBe(2);
      expect(reasons).toEqual([
        'the reranker did not answer within 500 ms; the chunks keep their retrieval order',
        'the reranker did not answer within 500 ms; the chunks keep their retrieval order',
        'the reranker failed repeatedly and is skipped until it recovers; the chunks keep their retrieval order',
        'the reranker failed repeatedly and is skipped until it recovers; the chunks keep their retrieval order',
      ]);
    } finally {
      reranker.signal('SIGCONT');
      guard.shutdown();
      client.close();
      await reranker.kill();
    }
  }, 60_000);

  it('fault - a reranker killed and started again closes its breaker on the first trial after it is healthy, the trial waiting for the reconnecting channel', async () => {
    const port = await freePort();
    const reranker = await startServiceProcess('reranker', { GRPC_HOST: '127.0.0.1', GRPC_PORT: String(port) });
    const client = createClient(loadHoplineGrpc().hopline.v1.Reranker, `127.0.0.1:${port}`);
    const guard = createGuard({ downstream: 'reranker', breaker: serviceBreaker(300) });
    const transitions: BreakerState[] = [];
    guard.onStateChange((state) => transitions.push(state));
    const rerank = createRerankerClient({ client, guard, budgetMs: 1_500 });
    const input = { query: 'Who owns Project Atlas?', chunks, topN: 3 };
    try {
      expect((await rerank.rerank(input, context())).fallback).toBe(false);
      await reranker.kill();
      for (let i = 0; i < 2; i += 1) expect((await rerank.rerank(input, context())).fallback).toBe(true);
      expect(guard.state).toBe('open');

      await reranker.restart();
      const sinceHealthy = transitions.length;
      await waitFor(
        async () => {
          await rerank.rerank(input, context());
          return guard.state === 'closed';
        },
        { timeoutMs: 10_000, intervalMs: 50, description: 'the breaker to close' },
      );
      // No trial failed once the reranker was healthy: the breaker never opened again.
      expect(transitions.slice(sinceHealthy)).not.toContain('open');
      expect((await rerank.rerank(input, context())).fallback).toBe(false);
    } finally {
      guard.shutdown();
      client.close();
      await reranker.kill();
    }
  }, 60_000);
});
