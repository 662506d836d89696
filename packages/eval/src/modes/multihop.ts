import type { AskCommand__Output } from '@hopline/contracts';
import type { ChatModel } from '@hopline/models';
import { createOpenAiChatModel } from '@hopline/models';
import type { AnalyzerPort, RerankerPort, RetrieverPort } from '@hopline/reasoning';
import { createAnalyzer, createHopReasoner } from '@hopline/reasoning';
import { createDeadlineGuard, createLexicalScorer, createReranker } from '@hopline/retrieval';
import type { QuestionOutcome } from '../outcome.js';
import type { EvalContext, EvalMode } from '../modes/mode.js';
import type { EvalRetrievalStack } from '../retrieval-stack.js';
import { shortAnswer } from './answer-metrics.js';
import { summarizeReasoning } from './reasoning-summary.js';

/** The chat model named by the environment, as the services read it; none means offline. */
function chatFromEnvironment(env: NodeJS.ProcessEnv): ChatModel | undefined {
  if (!env.OPENAI_BASE_URL) return undefined;
  return createOpenAiChatModel({
    baseURL: env.OPENAI_BASE_URL,
    ...(env.OPENAI_API_KEY ? { apiKey: env.OPENAI_API_KEY } : {}),
    model: env.CHAT_MODEL ?? 'gpt-4o-mini',
  });
}

/** Retrieval in process, through the same hybrid retriever the retrieval-worker serves. */
function retrieverOver(stack: EvalRetrievalStack, seen: Map<string, string>): RetrieverPort {
  return {
    async retrieve(input, ctx) {
      const result = await stack.retriever.retrieve({
        query: input.query,
        ...(input.hydeText ? { hydeText: input.hydeText } : {}),
        scope: ctx.request.scope,
        topK: input.topK,
        hop: input.hop,
        deadlineUnixMs: ctx.deadlineUnixMs,
        signal: ctx.signal,
      });
      for (const chunk of result.chunks) seen.set(chunk.chunkId, chunk.docId);
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
    guard: createDeadlineGuard(),
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

/**
 * Every question through the hop loop with in-process ports: the rules analyzer (and a chat
 * model when OPENAI_BASE_URL is set), the hybrid retriever, the lexical reranker, and the
 * offline reasoner unless a chat model is configured. Recall counts the first k chunks of the final evidence list only;
 * a single-shot retrieval of the same question in the same run stands beside it.
 */
export const multihopMode: EvalMode = {
  name: 'multihop',
  summarize: summarizeReasoning,
  async run({ questions, kb, stack, k, questionTimeoutMs }: EvalContext): Promise<QuestionOutcome[]> {
    const chat = chatFromEnvironment(process.env);
    const docIdOfChunk = new Map<string, string>();
    const analyzer = createAnalyzer(chat ? { chat } : {});
    const analyzerPort: AnalyzerPort = { analyze: (question, ctx) => analyzer.analyze(question, ctx) };
    const reasoner = createHopReasoner({
      analyzer: analyzerPort,
      retriever: retrieverOver(stack, docIdOfChunk),
      reranker: lexicalReranker(k),
      ...(chat ? { chat } : {}),
      config: { topK: k },
    });
    const scope = { tenantId: kb.tenantId, userId: 'eval', kbIds: [kb.kbId] };

    const outcomes: QuestionOutcome[] = [];
    for (const [position, question] of questions.entries()) {
      const single = await stack.retriever.retrieve({
        query: question.question,
        scope,
        topK: k,
        hop: 1,
        deadlineUnixMs: Date.now() + questionTimeoutMs,
      });
      const ask: AskCommand__Output = {
        ctx: { questionId: `eval-${position + 1}`, scope, deadlineUnixMs: Date.now() + questionTimeoutMs },
        question: question.question,
        maxHops: 0,
      };
      const started = performance.now();
      const { done, trace } = await reasoner.answer(ask, { emit: () => undefined });
      const latencyMs = performance.now() - started;
      outcomes.push({
        id: question.id,
        dataset: question.dataset,
        goldDocIds: kb.goldDocIds(question),
        rankedDocIds: trace.finalEvidenceChunkIds.map((chunkId) => docIdOfChunk.get(chunkId) ?? chunkId),
        latencyMs,
        reasoning: {
          answer: shortAnswer(done.answer, done.abstained),
          goldAnswers: [question.answer, ...question.answerAliases],
          hops: done.hops,
          llmCalls: done.llmCalls,
          stopReason: done.stopReason,
          route: done.route,
          singleShotDocIds: single.chunks.map((chunk) => chunk.docId),
        },
      });
    }
    return outcomes;
  },
};
