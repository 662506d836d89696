import type { Analysis__Output, Chunk__Output } from '@hopline/contracts';
import type { AnalyzerPort, RerankerPort, RetrieverPort } from '@hopline/reasoning';
import {
  retrieveOutputOf,
  retrieveRequestFor,
  type RetrieveReplyFields,
  type RetrieveRequestFields,
} from './retrieve-messages.js';

/** What query-understanding serves, called in its own process. */
export interface LocalAnalyzer {
  analyze(question: string, options: { deadlineUnixMs: number; signal: AbortSignal }): Promise<Analysis__Output>;
}

/** What the reranker serves, called in its own process. */
export interface LocalReranker {
  rerank(input: {
    query: string;
    chunks: readonly Chunk__Output[];
    topN: number;
    deadlineUnixMs: number;
    signal: AbortSignal;
  }): Promise<{ chunks: Chunk__Output[]; fallback: boolean; fallbackReason: string }>;
}

/** What a retrieval worker serves, called in its own process. */
export interface LocalRetriever {
  retrieve(request: RetrieveRequestFields): Promise<RetrieveReplyFields>;
}

/**
 * Query understanding called directly where it shares the hop-reasoner's process (the
 * embedded mode): the same analyzer its gRPC handler serves, without the loopback HTTP/2 call
 * and the protobuf encoding both ways. Breakers and budgets guard remote calls; a call in the
 * same process cannot be lost on the way, and the analyzer guards its own model calls.
 */
export function inProcessAnalyzer(local: LocalAnalyzer): AnalyzerPort {
  return {
    analyze: (question, ctx) => local.analyze(question, { deadlineUnixMs: ctx.deadlineUnixMs, signal: ctx.signal }),
  };
}

/** The reranker called directly where it shares the hop-reasoner's process, as inProcessAnalyzer. */
export function inProcessReranker(local: LocalReranker): RerankerPort {
  return {
    async rerank(input, ctx) {
      const ranked = await local.rerank({ ...input, deadlineUnixMs: ctx.deadlineUnixMs, signal: ctx.signal });
      return {
        chunks: ranked.chunks,
        fallback: ranked.fallback,
        ...(ranked.fallbackReason ? { fallbackReason: ranked.fallbackReason } : {}),
      };
    },
  };
}

/**
 * The retrieval worker called directly where it shares the hop-reasoner's process, as
 * inProcessAnalyzer: one worker, so nothing to hedge across, and its chunks reach the hop
 * without being encoded for a NATS reply and decoded again.
 */
export function inProcessRetriever(local: LocalRetriever): RetrieverPort {
  return {
    async retrieve(input, ctx) {
      return retrieveOutputOf(await local.retrieve(retrieveRequestFor(input, ctx)));
    },
  };
}
