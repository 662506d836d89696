import { describe, expect, it } from 'vitest';
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
});
