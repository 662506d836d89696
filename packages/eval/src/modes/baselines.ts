import type { EvalQuestion } from '../data/eval-set.js';
import { EVAL_SCOPE } from '../knowledge-base.js';
import type { SystemRun } from '../outcome.js';
import type { EvalMode, ModeContext } from './mode.js';

const SEARCH_SCOPE = { tenantId: EVAL_SCOPE.tenantId, kbIds: [EVAL_SCOPE.kbId] };

const retrievalRun = (rankedDocIds: string[], latencyMs: number): SystemRun => ({
  rankedDocIds,
  latencyMs,
  retrievalCalls: 1,
  llmCalls: 0,
  tokens: 0,
});

/** The question as one BM25 query: the lexical index alone, the baseline any retriever must beat. */
export async function bm25Run({ stack, k }: ModeContext, question: EvalQuestion): Promise<SystemRun> {
  const started = performance.now();
  const hits = await stack.lexical.search(
    { scope: SEARCH_SCOPE, query: question.question, limit: k },
    new AbortController().signal,
  );
  return retrievalRun(
    hits.map((hit) => hit.chunk.docId),
    performance.now() - started,
  );
}

/** The question as one hybrid retrieval, as the retrieval-worker serves it: the single-shot retriever. */
export async function singleShotRetrieval(
  { stack, k, questionTimeoutMs }: ModeContext,
  question: EvalQuestion,
): Promise<SystemRun> {
  const started = performance.now();
  const result = await stack.retriever.retrieve({
    query: question.question,
    scope: SEARCH_SCOPE,
    topK: k,
    hop: 1,
    deadlineUnixMs: Date.now() + questionTimeoutMs,
  });
  const latencyMs = performance.now() - started;
  if (result.degraded)
    throw new Error(`question ${question.id}: retrieval degraded: ${result.degradedReasons.join('; ')}`);
  return retrievalRun(
    result.chunks.map((chunk) => chunk.docId),
    latencyMs,
  );
}

/** Retrieval only: BM25 and the hybrid retriever, one query each, the question as it is. */
export const singleMode: EvalMode = {
  name: 'single',
  answers: false,
  open: (context) => async (question) => ({
    bm25: await bm25Run(context, question),
    'single-shot': await singleShotRetrieval(context, question),
  }),
};
