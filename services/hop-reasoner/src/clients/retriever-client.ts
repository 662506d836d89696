import type { Bus } from '@hopline/bus';
import { codecs, subjects } from '@hopline/contracts';
import { remainingMs, type Guard } from '@hopline/resilience';
import type { CallContext, RetrieveInput, RetrieveOutput, RetrieverPort } from '../ports.js';

/** Retrieval over NATS: a request to the retrieval-worker queue group, under its breaker. */
export function createRetrieverClient(bus: Bus, guard: Guard): RetrieverPort {
  return {
    async retrieve(input: RetrieveInput, ctx: CallContext): Promise<RetrieveOutput> {
      const request = codecs.retrieveRequest.encode({
        ctx: { questionId: ctx.request.questionId, scope: ctx.request.scope, deadlineUnixMs: ctx.deadlineUnixMs },
        query: input.query,
        hydeText: input.hydeText,
        topK: input.topK,
        hop: input.hop,
      });
      const reply = await guard.call(
        (signal) => bus.request(subjects.retrieve, request, { timeoutMs: remainingMs(ctx.deadlineUnixMs), signal }),
        { deadlineUnixMs: ctx.deadlineUnixMs, signal: ctx.signal },
      );
      const response = codecs.retrieveResponse.decode(reply.data);
      return { chunks: response.chunks, degraded: response.degraded, degradedReasons: response.degradedReasons };
    },
  };
}
