import {
  ValidationError,
  type Chunk__Output,
  type HoplineError,
  type RerankerClient,
  type RerankResponse__Output,
} from '@hopline/contracts';
import { unaryCall } from '@hopline/grpc';
import type { CallContext, RerankerPort, RerankInput, RerankOutput } from '@hopline/reasoning';
import { remainingMs, withFallback, type Guard } from '@hopline/resilience';
import { instrument, type HoplineMetrics } from '@hopline/telemetry';

export interface RerankerClientDeps {
  client: RerankerClient;
  guard: Guard;
  /** The longest one Rerank call may take, however much of the question's time is left. */
  budgetMs: number;
  metrics?: Pick<HoplineMetrics, 'grpcRequests' | 'grpcRequestDuration' | 'degradedRetrievals'>;
}

/** Why the reranker did not rank, in the words an answer's reader understands. */
function fallbackReason(error: HoplineError, limitMs: number): string {
  const consequence = 'the chunks keep their retrieval order';
  switch (error.code) {
    case 'deadline_exceeded':
      return `the reranker did not answer within ${Math.round(limitMs)} ms; ${consequence}`;
    case 'breaker_open':
      return `the reranker failed repeatedly and is skipped until it recovers; ${consequence}`;
    case 'unavailable':
    case 'no_responders':
      return `the reranker could not be reached; ${consequence}`;
    default:
      return `the reranker failed (${error.code}); ${consequence}`;
  }
}

/**
 * The chunks a Rerank reply kept: rebuilt from the ones sent when it names them by position,
 * as the reranker would have copied them (the rerank score set; a chunk the token budget cut
 * short keeps the start of its text, its span shortened to match); a reranker that predates
 * reply_by_position sends them whole.
 */
function keptChunks(response: RerankResponse__Output, sent: readonly Chunk__Output[]): Chunk__Output[] {
  if (response.ranked.length === 0) return response.chunks;
  return response.ranked.map(({ position, rerankScore, textLength }) => {
    const chunk = sent[position];
    if (!chunk) throw new ValidationError(`the reranker kept chunk ${position} of the ${sent.length} sent`);
    const kept = { ...chunk, scores: { ...chunk.scores, rerank: rerankScore } };
    if (textLength <= 0) return kept;
    const start = chunk.span?.start ?? 0;
    return { ...kept, text: chunk.text.slice(0, textLength), span: { start, end: start + textLength } };
  });
}

/**
 * Reranking over gRPC, under its breaker and its stage budget. When the reranker cannot
 * answer in time, the fused order from retrieval stands, flagged as a fallback: a slow or
 * stuck reranker degrades the answer (and, by timing out, opens its breaker), it never fails
 * the question or spends its deadline.
 */
export function createRerankerClient({ client, guard, budgetMs, metrics }: RerankerClientDeps): RerankerPort {
  return {
    rerank: (input: RerankInput, ctx: CallContext): Promise<RerankOutput> =>
      // A rerank the breaker skips makes no gRPC call, so this span is where it shows.
      instrument('rerank', { attributes: { 'hopline.breaker.state': guard.state } }, async (span) => {
        const limitMs = Math.min(budgetMs, remainingMs(ctx.deadlineUnixMs));
        const outcome = await withFallback(
          () =>
            guard.call(
              (signal, attempt) =>
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
                    replyByPosition: true,
                  },
                  {
                    deadlineUnixMs: ctx.deadlineUnixMs,
                    capMs: budgetMs,
                    signal,
                    waitForReady: attempt.trial,
                    ...(metrics ? { metrics } : {}),
                  },
                ).then((response) => ({ ...response, chunks: keptChunks(response, input.chunks) })),
              { deadlineUnixMs: ctx.deadlineUnixMs, capMs: budgetMs, signal: ctx.signal },
            ),
          (error) => ({
            chunks: input.chunks.slice(0, input.topN),
            fallback: true,
            fallbackReason: fallbackReason(error, limitMs),
          }),
        );
        const response = outcome.value;
        if (outcome.degraded) {
          metrics?.degradedRetrievals.inc({ path: 'rerank', reason: outcome.error.code });
          span.setAttributes({
            'hopline.degraded': true,
            'hopline.degraded_reasons': [response.fallbackReason ?? outcome.error.message],
            'error.type': outcome.error.code,
          });
          if (outcome.error.code === 'breaker_open') {
            span.addEvent('rerank skipped: breaker open', { 'hopline.breaker.state': guard.state });
          }
        }
        return {
          chunks: response.chunks,
          fallback: response.fallback,
          ...(response.fallbackReason ? { fallbackReason: response.fallbackReason } : {}),
        };
      }),
  };
}
