import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { loadHoplineGrpc } from '@hopline/contracts';
import { createClient, unaryCall } from '@hopline/grpc';
import { createLogger, createMetrics } from '@hopline/telemetry';
import { configSchema } from '../src/config.js';
import { startQueryUnderstandingService } from '../src/service.js';

/** One the rules leave open, so that the planner model is asked. */
const UNDECIDED_QUESTION =
  'Why do some historians think the long economic decline of the late empire began well before its famous military defeats and territorial losses?';

describe('query-understanding Analyze', () => {
  it("deadline - with a planner model that never answers, the rules' answer reaches the caller within its deadline", async () => {
    const planner = createServer((request) => request.resume());
    await new Promise<void>((resolve) => planner.listen(0, '127.0.0.1', resolve));
    const service = await startQueryUnderstandingService({
      config: configSchema.parse({
        GRPC_HOST: '127.0.0.1',
        GRPC_PORT: '0',
        OPENAI_BASE_URL: `http://127.0.0.1:${(planner.address() as AddressInfo).port}/v1`,
      }),
      logger: createLogger('query-understanding-test', { level: 'silent' }),
      metrics: createMetrics('test', { defaultMetrics: false }),
    });
    const client = createClient(loadHoplineGrpc().hopline.v1.QueryUnderstanding, `127.0.0.1:${service.port}`);
    try {
      const deadlineUnixMs = Date.now() + 500;
      const analysis = await unaryCall(
        client,
        'Analyze',
        {
          ctx: { questionId: 'q1', scope: { tenantId: 't', kbIds: ['kb'] }, deadlineUnixMs },
          question: UNDECIDED_QUESTION,
        },
        { deadlineUnixMs },
      );
      expect(analysis.decidedBy).toBe('FALLBACK');
      expect(analysis.fallbackReason).toContain('deadline_exceeded');
      expect(Date.now()).toBeLessThan(deadlineUnixMs);
    } finally {
      client.close();
      await service.stop();
      planner.closeAllConnections();
      planner.close();
    }
  });
});
