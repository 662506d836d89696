import type { Analysis__Output, AskCommand__Output, Chunk__Output } from '@hopline/contracts';
import { DecidedBy, Route } from '@hopline/contracts';
import type { ChatModel } from '@hopline/models';
import { createOpenAiChatModel } from '@hopline/models';
import type { AnalyzerPort, HopReasoner, RerankerPort, RetrieverPort } from '@hopline/reasoning';
import { createAnalyzer, createHopReasoner } from '@hopline/reasoning';
import { createLexicalScorer, createReranker, inProcessGuard } from '@hopline/retrieval';
import type { EvalQuestion } from '../data/eval-set.js';
import { EVAL_SCOPE } from '../knowledge-base.js';
import { shortAnswer } from '../metrics/answers.js';
import { citationSupport } from '../metrics/citations.js';
import type { SystemRun } from '../outcome.js';
import type { EvalRetrievalStack } from '../retrieval-stack.js';
import { bm25Run, singleShotRetrieval } from './baselines.js';
import type { EvalMode, ModeContext } from './mode.js';

/** The chat model named by the environment, as the services read it; none means offline. */
function chatFromEnvironment(env: NodeJS.ProcessEnv): ChatModel | undefined {
  if (!env.OPENAI_BASE_URL) return undefined;
  return createOpenAiChatModel({
    baseURL: env.OPENAI_BASE_URL,
    ...(env.OPENAI_API_KEY ? { apiKey: env.OPENAI_API_KEY } : {}),
    model: env.CHAT_MODEL ?? 'gpt-4o-mini',
  });
}

/** What the retriever port saw while one question ran: every chunk it returned, and its calls. */
interface RetrievalLog {
  chunks: Map<string, Chunk__Output>;
  calls: number;
}

/** Retrieval in process, through the same retriever (hybrid, and the entity graph from the seeds) the retrieval-worker serves. */
function retrieverOver(stack: EvalRetrievalStack, log: RetrievalLog): RetrieverPort {
  return {
    async retrieve(input, ctx) {
      log.calls += 1;
      const result = await stack.retriever.retrieve({
        query: input.query,
        ...(input.hydeText ? { hydeText: input.hydeText } : {}),
        scope: ctx.request.scope,
        topK: input.topK,
        hop: input.hop,
        seeds: input.seeds,
        deadlineUnixMs: ctx.deadlineUnixMs,
        signal: ctx.signal,
      });
      for (const chunk of result.chunks) log.chunks.set(chunk.chunkId, chunk);
      return { chunks: result.chunks, degraded: result.degraded, degradedReasons: result.degradedReasons };
    },
  };
}

/**
 * The reranker service's pipeline in process, with its lexical scorer (what it ranks with when no
 * cross-encoder is configured). The loop asks each hop for its top-k, so MMR keeps what the
 * hop asked for rather than the service's default six; the final evidence has its own budget.
 */
function lexicalReranker(k: number): RerankerPort {
  const reranker = createReranker({
    scorer: createLexicalScorer(),
    guard: inProcessGuard,
    defaults: { keep: Math.ceil(k * 1.5), mmrKeep: Math.ceil(k * 1.5), tokenBudget: Number.MAX_SAFE_INTEGER },
  });
  return {
    async rerank(input, ctx) {
      const result = await reranker.rerank({
        query: input.query,
        chunks: input.chunks,
        topN: input.topN,
        deadlineUnixMs: ctx.deadlineUnixMs,
        signal: ctx.signal,
      });
      return {
        chunks: result.chunks,
        fallback: result.fallback,
        ...(result.fallbackReason ? { fallbackReason: result.fallbackReason } : {}),
      };
    },
  };
}

// Single-shot answering: no analysis, one hop, the question as its query.
const ONE_RETRIEVAL: Analysis__Output = {
  route: Route.SINGLE,
  subQuestions: [],
  complexity: 1,
  signals: [],
  hydeText: '',
  decidedBy: DecidedBy.DECIDED_BY_UNSPECIFIED,
  fallbackReason: '',
  llmCalls: 0,
  tokens: 0,
  controls: null,
};

/** One question through a hop reasoner, in the terms the metrics read. */
async function answerWith(
  reasoner: HopReasoner,
  log: RetrievalLog,
  question: EvalQuestion,
  maxHops: number,
  questionTimeoutMs: number,
): Promise<SystemRun> {
  log.calls = 0;
  const ask: AskCommand__Output = {
    ctx: {
      questionId: `eval-${question.id}`,
      scope: { tenantId: EVAL_SCOPE.tenantId, userId: 'eval', kbIds: [EVAL_SCOPE.kbId], docIds: [] },
      deadlineUnixMs: Date.now() + questionTimeoutMs,
    },
    question: question.question,
    maxHops,
  };
  const started = performance.now();
  const { done, trace } = await reasoner.answer(ask, { emit: () => undefined });
  const latencyMs = performance.now() - started;
  const docOf = (chunkId: string) => log.chunks.get(chunkId)?.docId ?? chunkId;
  const cited = new Map(done.citations.map((citation) => [citation.index, citation.chunkId]));
  return {
    rankedDocIds: trace.finalEvidenceChunkIds.map(docOf),
    latencyMs,
    retrievalCalls: log.calls,
    llmCalls: done.llmCalls,
    tokens: done.tokens,
    answered: {
      route: done.route,
      stopReason: done.stopReason,
      hops: trace.hops.map((hop) => ({
        hop: hop.hop,
        query: hop.query,
        docIds: hop.evidenceChunkIds.map(docOf),
        answer: hop.answer?.answer ?? '',
        unknown: hop.answer?.unknown ?? true,
      })),
      subQuestions: done.route === Route.PARALLEL ? (trace.analysis?.subQuestions.length ?? 0) : 0,
      text: done.answer,
      answer: shortAnswer(done.answer, done.abstained),
      abstained: done.abstained,
      claims: citationSupport(done.answer, (index) => log.chunks.get(cited.get(index) ?? '')),
    },
  };
}

/**
 * Every question through the hop loop with in-process ports: the rules analyzer (and a chat
 * model when OPENAI_BASE_URL is set), the hybrid retriever, the lexical reranker, and the
 * offline reasoner unless a chat model is configured. Beside it, in the same run: BM25 and the
 * single-shot retrieval of the question (their top k), and a single-shot answer (one hop of the
 * same loop, no analysis) for its answers and cost. The loop's recall counts the first k chunks
 * of the final evidence it hands to synthesis.
 */
export const multihopMode: EvalMode = {
  name: 'multihop',
  answers: true,
  open(context: ModeContext) {
    const { stack, k, questionTimeoutMs } = context;
    const switchedOff = [...(context.switchedOff ?? [])];
    const chat = chatFromEnvironment(process.env);
    const log: RetrievalLog = { chunks: new Map(), calls: 0 };
    const analyzer = createAnalyzer({ ...(chat ? { chat } : {}), switchedOff });
    const ports = {
      retriever: retrieverOver(stack, log),
      reranker: lexicalReranker(k),
      ...(chat ? { chat } : {}),
      config: { topK: k, switchedOff },
    };
    const loop = createHopReasoner({
      ...ports,
      analyzer: { analyze: (question, ctx) => analyzer.analyze(question, ctx) } satisfies AnalyzerPort,
    });
    const singleShot = createHopReasoner({ ...ports, analyzer: { analyze: async () => ONE_RETRIEVAL } });

    if (switchedOff.length > 0)
      return async (question) => ({ 'multi-hop': await answerWith(loop, log, question, 0, questionTimeoutMs) });
    return async (question) => {
      const retrieval = await singleShotRetrieval(context, question);
      const oneHop = await answerWith(singleShot, log, question, 1, questionTimeoutMs);
      return {
        bm25: await bm25Run(context, question),
        'single-shot': { ...oneHop, rankedDocIds: retrieval.rankedDocIds },
        'multi-hop': await answerWith(loop, log, question, 0, questionTimeoutMs),
      };
    };
  },
};
