import { describe, expect, it, vi } from 'vitest';
import type * as Reasoning from '@hopline/reasoning';
import { createLogger, createMetrics } from '@hopline/telemetry';
import { configSchema } from '../src/config.js';
import { startQueryUnderstandingService } from '../src/service.js';

// Every question any analyzer of this process analyzes, and whether that analyzer had a planner model.
const analyzed = vi.hoisted(() => [] as Array<{ question: string; withPlanner: boolean }>);
vi.mock('@hopline/reasoning', async (importOriginal) => {
  const reasoning = await importOriginal<typeof Reasoning>();
  return {
    ...reasoning,
    createAnalyzer: (...args: Parameters<typeof reasoning.createAnalyzer>) => {
      const analyzer = reasoning.createAnalyzer(...args);
      const withPlanner = args[0]?.chat !== undefined;
      return {
        analyze: (...call: Parameters<typeof analyzer.analyze>) => {
          analyzed.push({ question: call[0], withPlanner });
          return analyzer.analyze(...call);
        },
      };
    },
  };
});

describe('query-understanding warm-up', () => {
  it('analyzes questions in both scripts (Latin and Han, which loads the Chinese segmenter) before it is started, by the rules alone even with a planner model', async () => {
    const service = await startQueryUnderstandingService({
      // A planner nobody answers at: the warm-up must neither wait for it nor count against its breaker.
      config: configSchema.parse({ GRPC_HOST: '127.0.0.1', GRPC_PORT: '0', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' }),
      logger: createLogger('query-understanding-test', { level: 'silent' }),
      metrics: createMetrics('test', { defaultMetrics: false }),
    });
    try {
      expect(analyzed.some(({ question }) => /[a-z]/i.test(question))).toBe(true);
      expect(analyzed.some(({ question }) => /[\u4e00-\u9fff]/.test(question))).toBe(true);
      expect(analyzed.filter(({ withPlanner }) => withPlanner)).toEqual([]);
      expect((await service.health()).details).toMatchObject({ plannerBreaker: 'closed' });
    } finally {
      await service.stop();
    }
  });
});
