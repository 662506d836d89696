import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '@hopline/config';
import { loadHoplineGrpc, type Chunk__Output, type RerankResponse__Output } from '@hopline/contracts';
import { createClient, unaryCall } from '@hopline/grpc';
import { createLogger, createMetrics } from '@hopline/telemetry';
import { configSchema } from '../src/config.js';
import { startRerankerService } from '../src/service.js';

const logger = createLogger('reranker-test', { level: 'silent' });

async function started(env: Record<string, string>) {
  const metrics = createMetrics('test', { defaultMetrics: false });
  const service = await startRerankerService({
    config: configSchema.parse({ GRPC_HOST: '127.0.0.1', GRPC_PORT: '0', ...env }),
    logger,
    metrics,
  });
  return { service, metrics };
}

describe('reranker service', () => {
  it('breakers - only a cross-encoder (RERANK_URL) is behind a breaker; the lexical scorer alone ranks in the process without one', async () => {
    const lexical = await started({});
    // Never called here: the breaker exists from the start.
    const crossEncoder = await started({ RERANK_URL: 'http://127.0.0.1:9/rerank' });
    try {
      expect((await lexical.service.health()).details).not.toHaveProperty('crossEncoderBreaker');
      expect(await lexical.metrics.registry.getSingleMetricAsString('hopline_breaker_state')).not.toContain(
        'cross-encoder',
      );
      expect((await crossEncoder.service.health()).details).toMatchObject({ crossEncoderBreaker: 'closed' });
      const ranked = await lexical.service.rerank({
        query: 'alpha',
        chunks: [
          { chunkId: 'b', text: 'Beta gamma.' },
          { chunkId: 'a', text: 'Alpha beta.' },
        ].map((chunk) => ({ ...chunk, title: '', docId: chunk.chunkId })) as never,
        topN: 2,
        deadlineUnixMs: Date.now() + 5_000,
      });
      expect(ranked.chunks[0]?.chunkId).toBe('a');
      expect(ranked.fallback).toBe(false);
    } finally {
      await Promise.all([lexical.service.stop(), crossEncoder.service.stop()]);
    }
  });

  it("config - RERANK_MAX_BATCH defaults to 32, TEI's own cap, and takes only a positive whole number", () => {
    expect(loadConfig('reranker', configSchema, {}).RERANK_MAX_BATCH).toBe(32);
    expect(loadConfig('reranker', configSchema, { RERANK_MAX_BATCH: '100' }).RERANK_MAX_BATCH).toBe(100);
    for (const value of ['0', '1.5', 'many'])
      expect(() => loadConfig('reranker', configSchema, { RERANK_MAX_BATCH: value })).toThrow(/RERANK_MAX_BATCH/);
  });

  it('batches - RERANK_MAX_BATCH reaches the cross-encoder: a server taking 2 texts a request scores all 5 chunks', async () => {
    const batches: number[] = [];
    // Refuses more than two texts, as TEI does past its --max-client-batch-size.
    const crossEncoder = createServer((request, response) => {
      let raw = '';
      request.on('data', (part: Buffer) => (raw += part.toString()));
      request.on('end', () => {
        const { texts } = JSON.parse(raw) as { texts: string[] };
        batches.push(texts.length);
        const ok = texts.length <= 2;
        response.writeHead(ok ? 200 : 413, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify(ok ? texts.map((_text, index) => ({ index, score: 0.5 })) : { error: 'batch size too large' }),
        );
      });
    });
    await new Promise<void>((resolve) => crossEncoder.listen(0, '127.0.0.1', resolve));
    const { service } = await started({
      RERANK_URL: `http://127.0.0.1:${(crossEncoder.address() as AddressInfo).port}`,
      RERANK_MAX_BATCH: '2',
    });
    try {
      const result = await service.rerank({
        query: 'alpha',
        chunks: ['a', 'b', 'c', 'd', 'e'].map((id) => ({
          chunkId: id,
          docId: id,
          title: '',
          text: `Alpha ${id}.`,
        })) as never,
        deadlineUnixMs: Date.now() + 5_000,
      });
      expect(result).toMatchObject({ scorer: 'cross-encoder:tei', fallback: false });
      expect(batches.sort()).toEqual([1, 2, 2]);
    } finally {
      await service.stop();
      crossEncoder.closeAllConnections();
      crossEncoder.close();
    }
  });

  it('deadline - with a cross-encoder that never answers, the lexical scores reach the caller within its deadline', async () => {
    const crossEncoder = createServer((request) => request.resume());
    await new Promise<void>((resolve) => crossEncoder.listen(0, '127.0.0.1', resolve));
    const { service } = await started({
      RERANK_URL: `http://127.0.0.1:${(crossEncoder.address() as AddressInfo).port}/rerank`,
    });
    const client = createClient(loadHoplineGrpc().hopline.v1.Reranker, `127.0.0.1:${service.port}`);
    try {
      // Long enough that the reply's headroom (a fifth of it, 250 ms at most) covers the
      // lexical fallback on a loaded machine, as a question's deadline of seconds does.
      const deadlineUnixMs = Date.now() + 1_500;
      const reply = await unaryCall(
        client,
        'Rerank',
        {
          ctx: { questionId: 'q1', scope: { tenantId: 't', kbIds: ['kb'] }, deadlineUnixMs },
          query: 'who painted the tower',
          chunks: [{ chunkId: 'a', docId: 'd', title: '', text: 'The keeper painted the tower red.' }],
        },
        { deadlineUnixMs },
      );
      expect(reply).toMatchObject({ scorer: 'lexical', fallback: true });
      expect(reply.fallbackReason).toContain('deadline_exceeded');
      expect(Date.now()).toBeLessThan(deadlineUnixMs);
    } finally {
      client.close();
      await service.stop();
      crossEncoder.closeAllConnections();
      crossEncoder.close();
    }
  });

  it('wire - asked to reply by position, it names the chunks it would have sent back, the cut one by its length; unasked, it sends them whole', async () => {
    const { service } = await started({});
    const client = createClient(loadHoplineGrpc().hopline.v1.Reranker, `127.0.0.1:${service.port}`);
    try {
      const chunk = (chunkId: string, text: string, start: number): Chunk__Output =>
        ({
          chunkId,
          docId: `doc-${chunkId}`,
          title: '',
          text,
          span: { start, end: start + text.length },
        }) as Chunk__Output;
      const chunks = [
        chunk('river', 'The ferry crosses the river twice a day.', 0),
        chunk('mill', 'The old mill by the river grinds flour. It was rebuilt after a flood. '.repeat(6), 40),
        chunk('bell', 'The bell tower chimes at noon.', 500),
      ];
      const ask = (replyByPosition: boolean) =>
        unaryCall(
          client,
          'Rerank',
          {
            ctx: { questionId: 'q1', scope: { tenantId: 't', kbIds: ['kb'] }, deadlineUnixMs: Date.now() + 5_000 },
            query: 'which mill stands by the river',
            chunks,
            topN: 3,
            // Small enough that a kept chunk is cut short.
            tokenBudget: 60,
            replyByPosition,
          },
          { deadlineUnixMs: Date.now() + 5_000 },
        );
      const whole: RerankResponse__Output = await ask(false);
      const byPosition = await ask(true);
      expect(whole.ranked).toEqual([]);
      expect(byPosition.chunks).toEqual([]);
      expect(byPosition).toMatchObject({ fallback: whole.fallback, scorer: whole.scorer });
      const cut = whole.chunks.findIndex(
        (kept) => kept.text.length < (chunks.find((c) => c.chunkId === kept.chunkId)?.text.length ?? 0),
      );
      expect(cut).not.toBe(-1);
      expect(byPosition.ranked).toEqual(
        whole.chunks.map((kept, index) => ({
          position: chunks.findIndex((sent) => sent.chunkId === kept.chunkId),
          rerankScore: kept.scores?.rerank,
          textLength: index === cut ? kept.text.length : 0,
        })),
      );
    } finally {
      client.close();
      await service.stop();
    }
  });
});
