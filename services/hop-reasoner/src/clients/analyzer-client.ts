import type { Analysis__Output, QueryUnderstandingClient } from '@hopline/contracts';
import { unaryCall } from '@hopline/grpc';
import type { Guard } from '@hopline/resilience';
import type { HoplineMetrics } from '@hopline/telemetry';
import type { AnalyzerPort, CallContext } from '../ports.js';

/** Query understanding over gRPC, under its breaker. */
export function createAnalyzerClient(
  client: QueryUnderstandingClient,
  guard: Guard,
  metrics?: Pick<HoplineMetrics, 'grpcRequests' | 'grpcRequestDuration'>,
): AnalyzerPort {
  return {
    analyze(question: string, ctx: CallContext): Promise<Analysis__Output> {
      return guard.call(
        (signal) =>
          unaryCall(
            client,
            'Analyze',
            {
              ctx: { questionId: ctx.request.questionId, scope: ctx.request.scope, deadlineUnixMs: ctx.deadlineUnixMs },
              question,
            },
            { deadlineUnixMs: ctx.deadlineUnixMs, signal, ...(metrics ? { metrics } : {}) },
          ),
        { deadlineUnixMs: ctx.deadlineUnixMs, signal: ctx.signal },
      );
    },
  };
}
