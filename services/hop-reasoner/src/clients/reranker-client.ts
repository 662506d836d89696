import type { RerankerClient } from '@hopline/contracts';
import { unaryCall } from '@hopline/grpc';
import { withFallback, type Guard } from '@hopline/resilience';
import type { HoplineMetrics } from '@hopline/telemetry';
import type { CallContext, RerankerPort, RerankInput, RerankOutput } from '../ports.js';

/**
 * Reranking over gRPC, under its breaker. When the reranker cannot answer, the fused order
 * from retrieval stands, flagged as a fallback: a slow reranker degrades the answer, it never
 * fails the question.
 */
export function createRerankerClient(
  client: RerankerClient,
  guard: Guard,
  metrics?: Pick<HoplineMetrics, 'grpcRequests' | 'grpcRequestDuration' | 'degradedRetrievals'>,
): RerankerPort {
  return {
    async rerank(input: RerankInput, ctx: CallContext): Promise<RerankOutput> {
      const outcome = await withFallback(
        () =>
          guard.call(
            (signal) =>
              unaryCall(
                client,
                'Rerank',
                {
                  ctx: {
                    questionId: ctx.request.questionId,
                    scope: ctx.request.scope,
                    deadlineUnixMs: ctx.deadlineUnixMs,
                  },
                  query: input.query,
                  chunks: [...input.chunks],
                  topN: input.topN,
                },
                { deadlineUnixMs: ctx.deadlineUnixMs, signal, ...(metrics ? { metrics } : {}) },
              ),
            { deadlineUnixMs: ctx.deadlineUnixMs, signal: ctx.signal },
          ),
        () => ({
          chunks: input.chunks.slice(0, input.topN),
          fallback: true,
          fallbackReason: 'reranker unavailable',
          scorer: 'fused-order',
        }),
      );
      if (outcome.degraded) {
        metrics?.degradedRetrievals.inc({ path: 'rerank', reason: outcome.error.code });
        return {
          chunks: outcome.value.chunks,
          fallback: true,
          fallbackReason: `reranker failed (${outcome.error.code}): ${outcome.error.message}`,
        };
      }
      const response = outcome.value;
      return {
        chunks: response.chunks,
        fallback: response.fallback,
        ...(response.fallbackReason ? { fallbackReason: response.fallbackReason } : {}),
      };
    },
  };
}
