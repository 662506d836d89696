import type { Chunk__Output, ValidRequestContext } from '@hopline/contracts';
import type { CallContext, RetrieveInput, RetrieveOutput } from '@hopline/reasoning';
import { trace } from '@opentelemetry/api';

/** A hop's retrieval as a retrieval worker takes it, over NATS or in its own process. */
export interface RetrieveRequestFields {
  ctx: ValidRequestContext;
  query: string;
  hydeText: string;
  topK: number;
  hop: number;
  seeds: string[];
}

/** A retrieval worker's answer, over NATS or in its own process. */
export interface RetrieveReplyFields {
  chunks: Chunk__Output[];
  degraded: boolean;
  degradedReasons: string[];
  noGraphReason: string;
}

export function retrieveRequestFor(input: RetrieveInput, ctx: CallContext): RetrieveRequestFields {
  return {
    ctx: { questionId: ctx.request.questionId, scope: ctx.request.scope, deadlineUnixMs: ctx.deadlineUnixMs },
    query: input.query,
    hydeText: input.hydeText,
    topK: input.topK,
    hop: input.hop,
    seeds: input.seeds,
  };
}

export function retrieveOutputOf(reply: RetrieveReplyFields): RetrieveOutput {
  // Not a degradation: a deployment without a graph answers every seeded retrieval so.
  if (reply.noGraphReason)
    trace.getActiveSpan()?.setAttribute('hopline.retrieval.no_graph_reason', reply.noGraphReason);
  return { chunks: reply.chunks, degraded: reply.degraded, degradedReasons: reply.degradedReasons };
}
