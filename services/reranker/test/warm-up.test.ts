import { describe, expect, it, vi } from 'vitest';
import type * as Retrieval from '@hopline/retrieval';
import { createLogger, createMetrics } from '@hopline/telemetry';
import { configSchema } from '../src/config.js';
import { startRerankerService } from '../src/service.js';

// Every query any reranker of this process ranks, in order: what the service ran before it was started.
const ranked = vi.hoisted(() => [] as string[]);
vi.mock('@hopline/retrieval', async (importOriginal) => {
  const retrieval = await importOriginal<typeof Retrieval>();
  return {
    ...retrieval,
    createReranker: (...args: Parameters<typeof retrieval.createReranker>) => {
      const reranker = retrieval.createReranker(...args);
      return {
        rerank: (input: Parameters<typeof reranker.rerank>[0]) => {
          ranked.push(input.query);
          return reranker.rerank(input);
        },
      };
    },
  };
});

describe('reranker warm-up', () => {
  it('ranks in both scripts (Latin and Han, which loads the Chinese segmenter) before it listens, by the lexical scorer even with a cross-encoder', async () => {
    const service = await startRerankerService({
      // A cross-encoder nobody answers at: the warm-up must neither wait for it nor count against its breaker.
      config: configSchema.parse({ GRPC_HOST: '127.0.0.1', GRPC_PORT: '0', RERANK_URL: 'http://127.0.0.1:9/rerank' }),
      logger: createLogger('reranker-test', { level: 'silent' }),
      metrics: createMetrics('test', { defaultMetrics: false }),
    });
    try {
      expect(ranked.some((query) => /[a-z]/i.test(query))).toBe(true);
      expect(ranked.some((query) => /[\u4e00-\u9fff]/.test(query))).toBe(true);
      expect((await service.health()).details).toMatchObject({ crossEncoderBreaker: 'closed' });
    } finally {
      await service.stop();
    }
  });
});
