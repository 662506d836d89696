import { describe, expect, it } from 'vitest';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { loadHoplineGrpc } from '@hopline/contracts';
import { createClient, unaryCall } from '@hopline/grpc';
import { createLogger, createMetrics } from '@hopline/telemetry';
import { configSchema } from '../src/config.js';
import { startQueryUnderstandingService } from '../src/service.js';

/** The Hopline error code the call failed with (the client maps the gRPC status back), or 'ok'. */
async function outcomeOf(call: () => Promise<unknown>): Promise<string> {
  try {
    await call();
    return 'ok';
  } catch (error) {
    const e = error as { code?: unknown; cause?: { code?: number } };
    return e.cause?.code === GrpcStatus.INVALID_ARGUMENT ? 'invalid_argument' : String(e.code);
  }
}

describe('query-understanding - Analyze validates its request', () => {
  it('validation - an empty or blank question is INVALID_ARGUMENT, not analyzed as if it were a question', async () => {
    const service = await startQueryUnderstandingService({
      config: configSchema.parse({ GRPC_HOST: '127.0.0.1', GRPC_PORT: '0' }),
      logger: createLogger('qu-validation', { level: 'silent' }),
      metrics: createMetrics('test', { defaultMetrics: false }),
    });
    const client = createClient(loadHoplineGrpc().hopline.v1.QueryUnderstanding, `127.0.0.1:${service.port}`);
    try {
      // The control: a request without its context is refused as it should be.
      expect(
        await outcomeOf(() =>
          unaryCall(client, 'Analyze', { question: 'Who owns Atlas?' }, { deadlineUnixMs: Date.now() + 5_000 }),
        ),
      ).toBe('invalid_argument');
      for (const question of ['', '   \n\t ']) {
        const deadlineUnixMs = Date.now() + 5_000;
        const outcome = await outcomeOf(() =>
          unaryCall(
            client,
            'Analyze',
            { ctx: { questionId: 'q1', scope: { tenantId: 't', kbIds: ['kb'] }, deadlineUnixMs }, question },
            { deadlineUnixMs },
          ),
        );
        expect(outcome, `question ${JSON.stringify(question)}`).toBe('invalid_argument');
      }
    } finally {
      client.close();
      await service.stop();
    }
  });
});
