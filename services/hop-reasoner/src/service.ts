import { busHealth, type Bus, type KeyValueStore } from '@hopline/bus';
import { loadHoplineGrpc, type QueryUnderstandingClient, type RerankerClient } from '@hopline/contracts';
import { createClient, mutualTlsFrom } from '@hopline/grpc';
import { createOpenAiChatModel, type ChatModel } from '@hopline/models';
import { createHopReasoner, EARLY_RETRIEVAL_OUTCOMES } from '@hopline/reasoning';
import { createGuard, DEFAULT_BREAKER, type Guard } from '@hopline/resilience';
import { warmUp } from '@hopline/runtime';
import type { HealthReport, HoplineMetrics, Logger } from '@hopline/telemetry';
import { watchOperatorControls, type QuestionStreams } from '@hopline/questions';
import { createAnalyzerClient } from './clients/analyzer-client.js';
import { closeRetrievalBreakerAfterBusOutage } from './clients/bus-outage-breaker.js';
import {
  inProcessAnalyzer,
  inProcessReranker,
  inProcessRetriever,
  type LocalAnalyzer,
  type LocalReranker,
  type LocalRetriever,
} from './clients/in-process.js';
import { createRerankerClient } from './clients/reranker-client.js';
import { createRetrieverClient } from './clients/retriever-client.js';
import { WorkerDirectory } from './clients/worker-directory.js';
import type { Config } from './config.js';
import { startQuestionJobs } from './question-jobs.js';
import { warmUpCalls } from './warm-up.js';

export interface HopReasonerServiceDeps {
  config: Pick<
    Config,
    | 'QUERY_UNDERSTANDING_ADDRESS'
    | 'RERANKER_ADDRESS'
    | 'GRPC_TLS_CA'
    | 'GRPC_TLS_CERT'
    | 'GRPC_TLS_KEY'
    | 'OPENAI_BASE_URL'
    | 'OPENAI_API_KEY'
    | 'CHAT_MODEL'
    | 'MAX_HOPS'
    | 'EARLY_FIRST_RETRIEVAL'
    | 'TOP_K'
    | 'LLM_CALL_BUDGET'
    | 'LLM_TOKEN_BUDGET'
    | 'MAX_CONCURRENT_QUESTIONS'
    | 'ANALYZE_BUDGET_MS'
    | 'RETRIEVE_BUDGET_MS'
    | 'RERANK_BUDGET_MS'
    | 'MODEL_CALL_BUDGET_MS'
    | 'BREAKER_RESET_MS'
    | 'QUESTION_LEASE_MS'
  >;
  bus: Bus;
  /** The question queue it takes questions from and the log it writes their events to. */
  questions: QuestionStreams;
  /** Where reasoning traces are kept for GET /v1/questions/{id}/trace. */
  traces: KeyValueStore;
  logger: Logger;
  metrics: HoplineMetrics;
  /**
   * Query understanding, the reranker and the retrieval worker where they run in this process
   * (the embedded mode): called directly, and their gRPC addresses and NATS subjects are not used.
   */
  inProcess?: { analyzer: LocalAnalyzer; reranker: LocalReranker; retriever: LocalRetriever };
}

export interface HopReasonerService {
  health(): Promise<HealthReport>;
  stop(): Promise<void>;
}

/**
 * The hop-reasoner: takes questions from the question queue and runs the bounded loop,
 * calling query-understanding and the reranker over gRPC and the retrieval workers over NATS,
 * each through its own breaker, each call within the smaller of its stage budget and what is
 * left of the question's deadline.
 */
export async function startHopReasonerService(deps: HopReasonerServiceDeps): Promise<HopReasonerService> {
  const { config, bus, traces, logger, metrics } = deps;
  const grpc = loadHoplineGrpc().hopline.v1;
  // A downstream that times out twice in a row is down, whatever its earlier successes; it is
  // tried again after BREAKER_RESET_MS, its trial waiting for a reconnecting channel.
  const breaker = { ...DEFAULT_BREAKER, resetTimeoutMs: config.BREAKER_RESET_MS, consecutiveFailures: 2 };
  const guard = (downstream: string): Guard => createGuard({ downstream, breaker, logger, metrics });
  const guards = {
    analyze: guard('query-understanding'),
    retrieve: guard('retrieval-worker'),
    rerank: guard('reranker'),
    chat: guard('chat-model'),
  };

  // In the embedded mode query-understanding, the reranker and the retrieval worker are called
  // directly; otherwise over gRPC and NATS.
  const { inProcess } = deps;
  const tls = mutualTlsFrom(config);
  const clientOptions = tls ? { credentials: tls.client() } : {};
  const analyzerClient = inProcess
    ? undefined
    : createClient(grpc.QueryUnderstanding, config.QUERY_UNDERSTANDING_ADDRESS, clientOptions);
  const rerankerClient = inProcess ? undefined : createClient(grpc.Reranker, config.RERANKER_ADDRESS, clientOptions);
  const analyzer = inProcess
    ? inProcessAnalyzer(inProcess.analyzer)
    : createAnalyzerClient({
        client: analyzerClient as QueryUnderstandingClient,
        guard: guards.analyze,
        budgetMs: config.ANALYZE_BUDGET_MS,
        metrics,
      });
  const reranker = inProcess
    ? inProcessReranker(inProcess.reranker)
    : createRerankerClient({
        client: rerankerClient as RerankerClient,
        guard: guards.rerank,
        budgetMs: config.RERANK_BUDGET_MS,
        metrics,
      });
  const chat: ChatModel | undefined = config.OPENAI_BASE_URL
    ? createOpenAiChatModel({
        baseURL: config.OPENAI_BASE_URL,
        apiKey: config.OPENAI_API_KEY,
        model: config.CHAT_MODEL,
        guard: guards.chat,
        requestTimeoutMs: config.MODEL_CALL_BUDGET_MS,
        metrics,
      })
    : undefined;

  const workers = await WorkerDirectory.start(bus);
  const stopBusOutageWatch = closeRetrievalBreakerAfterBusOutage({
    bus,
    guard: guards.retrieve,
    workers,
    settleMs: config.RETRIEVE_BUDGET_MS,
  });
  const controls = await watchOperatorControls({
    bus,
    logger,
    onChange: (current) => {
      metrics.controlMultiHop.set(current.multiHop ? 1 : 0);
      metrics.controlHopCap.set(current.hopCap);
    },
  });
  const earlyFirstRetrieval = config.EARLY_FIRST_RETRIEVAL && !inProcess;
  // Both outcomes from zero, so that the first spent search shows in increase().
  if (earlyFirstRetrieval) for (const outcome of EARLY_RETRIEVAL_OUTCOMES) metrics.earlyRetrievals.inc({ outcome }, 0);
  const reasoner = createHopReasoner({
    analyzer,
    retriever: inProcess
      ? inProcessRetriever(inProcess.retriever)
      : createRetrieverClient({ bus, guard: guards.retrieve, workers, budgetMs: config.RETRIEVE_BUDGET_MS }),
    reranker,
    ...(chat ? { chat } : {}),
    logger,
    controls: controls.current,
    onEarlyRetrieval: (outcome) => metrics.earlyRetrievals.inc({ outcome }),
    config: {
      maxHops: config.MAX_HOPS,
      topK: config.TOP_K,
      earlyFirstRetrieval,
      maxLlmCalls: config.LLM_CALL_BUDGET,
      maxTokens: config.LLM_TOKEN_BUDGET,
    },
  });
  // Before it takes a question: the channels start connecting (without waiting for services that
  // may start after this one), and the loop runs on invented questions in this process.
  for (const client of [analyzerClient, rerankerClient]) client?.getChannel().getConnectivityState(true);
  await warmUp(warmUpCalls(), logger);
  const questions = await startQuestionJobs({
    ...deps.questions,
    reasoner,
    traces,
    logger,
    metrics,
    capacity: config.MAX_CONCURRENT_QUESTIONS,
    leaseMs: config.QUESTION_LEASE_MS,
  });
  logger.info('hop-reasoner ready', { reasoner: chat ? `model ${chat.model}` : 'offline', maxHops: config.MAX_HOPS });

  return {
    async health() {
      const breakers = Object.fromEntries(Object.values(guards).map((g) => [g.downstream, g.state]));
      const busState = busHealth(bus);
      return {
        ok: guards.retrieve.state !== 'open' && busState.ok,
        details: {
          inFlight: questions.inFlight,
          breakers,
          retrievalWorkers: workers.live,
          controls: controls.current(),
          bus: busState.details,
        },
      };
    },
    async stop() {
      await questions.stop();
      controls.stop();
      stopBusOutageWatch();
      workers.stop();
      for (const g of Object.values(guards)) g.shutdown();
      analyzerClient?.close();
      rerankerClient?.close();
    },
  };
}
