import { describe, expect, it } from 'vitest';
import type { Chunk__Output } from '@hopline/contracts';
import { createAnalyzer, type CallContext } from '@hopline/reasoning';
import {
  inProcessAnalyzer,
  inProcessReranker,
  inProcessRetriever,
  type LocalReranker,
  type LocalRetriever,
} from '../src/clients/in-process.js';

const callContext = (deadlineUnixMs: number, signal: AbortSignal): CallContext => ({
  request: { questionId: 'q1', scope: { tenantId: 'acme', userId: 'u', kbIds: ['docs'], docIds: [] }, deadlineUnixMs },
  deadlineUnixMs,
  signal,
});

const chunk = (chunkId: string) => ({ chunkId, text: chunkId }) as Chunk__Output;

describe('in-process ports', () => {
  it("in-process reranker - passes the call's deadline and signal, and names a fallback's reason only when there is one", async () => {
    const seen: Array<Parameters<LocalReranker['rerank']>[0]> = [];
    let fallbackReason = '';
    const reranker = inProcessReranker({
      async rerank(input) {
        seen.push(input);
        return { chunks: [...input.chunks].reverse(), fallback: fallbackReason !== '', fallbackReason };
      },
    });
    const signal = new AbortController().signal;
    const deadline = Date.now() + 1_000;
    const input = { query: 'who owns Atlas', chunks: [chunk('a'), chunk('b')], topN: 2 };

    const ranked = await reranker.rerank(input, callContext(deadline, signal));
    expect(ranked).toEqual({ chunks: [chunk('b'), chunk('a')], fallback: false });
    expect(seen[0]).toMatchObject({ query: 'who owns Atlas', topN: 2, deadlineUnixMs: deadline });
    expect(seen[0]?.signal).toBe(signal);

    fallbackReason = 'cross-encoder failed (unavailable)';
    expect(await reranker.rerank(input, callContext(deadline, signal))).toMatchObject({
      fallback: true,
      fallbackReason: 'cross-encoder failed (unavailable)',
    });
  });

  it("in-process retriever - asks with the question's verified scope and the call's deadline, and answers with the worker's chunks and degradation", async () => {
    const seen: Array<Parameters<LocalRetriever['retrieve']>[0]> = [];
    const retriever = inProcessRetriever({
      async retrieve(request) {
        seen.push(request);
        return { chunks: [chunk('a')], degraded: true, degradedReasons: ['vector path failed'], noGraphReason: '' };
      },
    });
    // A parallel branch's call has a deadline of its own, tighter than the question's.
    const callDeadline = Date.now() + 500;
    const ctx = { ...callContext(Date.now() + 1_000, new AbortController().signal), deadlineUnixMs: callDeadline };
    const input = { query: 'owner of Atlas', hydeText: '', topK: 5, hop: 2, seeds: ['owner of Atlas', 'Atlas'] };
    const answer = await retriever.retrieve(input, ctx);
    expect(answer).toEqual({ chunks: [chunk('a')], degraded: true, degradedReasons: ['vector path failed'] });
    expect(seen).toEqual([
      {
        ctx: { questionId: 'q1', scope: ctx.request.scope, deadlineUnixMs: callDeadline },
        query: 'owner of Atlas',
        hydeText: '',
        topK: 5,
        hop: 2,
        seeds: ['owner of Atlas', 'Atlas'],
      },
    ]);
  });

  it('in-process analyzer - answers as the analyzer query-understanding serves, and a failure reaches the caller', async () => {
    const signal = new AbortController().signal;
    const analyzer = inProcessAnalyzer(createAnalyzer({}));
    const analysis = await analyzer.analyze(
      'Which department does the owner of Project Atlas belong to?',
      callContext(Date.now() + 1_000, signal),
    );
    expect(analysis.route).toBe('ITERATIVE');

    const failing = inProcessAnalyzer({
      analyze: () => Promise.reject(new Error('planner down')),
    });
    await expect(failing.analyze('q', callContext(Date.now() + 1_000, signal))).rejects.toThrow('planner down');
  });
});
