import type { Endpoint } from '@hopline/bus';
import { codecs, requireRequestContext, subjects, queueGroups } from '@hopline/contracts';
import type { HybridRetriever } from '@hopline/retrieval';
import type { HoplineMetrics } from '@hopline/telemetry';
import { trace } from '@opentelemetry/api';

export interface RetrieveEndpointDeps {
  retriever: HybridRetriever;
  workerId: string;
  metrics: Pick<HoplineMetrics, 'degradedRetrievals'>;
}

/**
 * The retrieve request/reply endpoint. The scope comes from the verified request context and
 * nothing else in the request can widen it: the retriever applies it as a hard filter.
 */
export function retrieveEndpoint({ retriever, workerId, metrics }: RetrieveEndpointDeps): Endpoint {
  return {
    name: 'retrieve',
    subject: subjects.retrieve,
    queue: queueGroups.retrievalWorker,
    async handle(message) {
      const request = codecs.retrieveRequest.decode(message.data);
      const ctx = requireRequestContext(request.ctx);
      const result = await retriever.retrieve({
        query: request.query,
        ...(request.hydeText ? { hydeText: request.hydeText } : {}),
        scope: { tenantId: ctx.scope.tenantId, kbIds: ctx.scope.kbIds },
        topK: request.topK,
        hop: request.hop,
        deadlineUnixMs: ctx.deadlineUnixMs,
      });
      const span = trace.getActiveSpan();
      span?.setAttributes({
        'hopline.question_id': ctx.questionId,
        'hopline.hop': request.hop,
        'hopline.retrieval.hits': result.chunks.length,
        'hopline.retrieval.degraded': result.degraded,
      });
      for (const reason of result.degradedReasons) {
        // Reasons read "<backend> search failed (<code>): <message>"; labels take the closed parts.
        metrics.degradedRetrievals.inc({
          path: reason.split(' ')[0] ?? 'unknown',
          reason: /\((\w+)\)/.exec(reason)?.[1] ?? 'unknown',
        });
      }
      return {
        data: codecs.retrieveResponse.encode({
          chunks: result.chunks,
          degraded: result.degraded,
          degradedReasons: result.degradedReasons,
          timings: result.timings,
          workerId,
        }),
      };
    },
  };
}
