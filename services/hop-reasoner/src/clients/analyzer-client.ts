import type { Analysis__Output, QueryUnderstandingClient } from '@hopline/contracts';
import { unaryCall } from '@hopline/grpc';
import type { AnalyzerPort, CallContext } from '@hopline/reasoning';
import type { Guard } from '@hopline/resilience';
import type { HoplineMetrics } from '@hopline/telemetry';

export interface AnalyzerClientDeps {
  client: QueryUnderstandingClient;
  guard: Guard;
  /** The longest one Analyze call may take, however much of the question's time is left. */
  budgetMs: number;
  metrics?: Pick<HoplineMetrics, 'grpcRequests' | 'grpcRequestDuration'>;
}

/** Query understanding over gRPC, under its breaker and its stage budget. */
export function createAnalyzerClient({ client, guard, budgetMs, metrics }: AnalyzerClientDeps): AnalyzerPort {
  return {
    analyze(question: string, ctx: CallContext): Promise<Analysis__Output> {
      return guard.call(
        (signal, attempt) =>
          unaryCall(
            client,
            'Analyze',
            {
              ctx: { questionId: ctx.request.questionId, scope: ctx.request.scope, deadlineUnixMs: ctx.deadlineUnixMs },
              question,
            },
            {
              deadlineUnixMs: ctx.deadlineUnixMs,
              capMs: budgetMs,
              signal,
              waitForReady: attempt.trial,
              ...(metrics ? { metrics } : {}),
            },
          ),
        { deadlineUnixMs: ctx.deadlineUnixMs, capMs: budgetMs, signal: ctx.signal },
      );
    },
  };
}
