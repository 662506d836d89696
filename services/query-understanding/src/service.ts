import { loadHoplineGrpc, requireRequestContext, ValidationError } from '@hopline/contracts';
import { createGrpcServer, mutualTlsFrom } from '@hopline/grpc';
import { createOpenAiChatModel } from '@hopline/models';
import { createAnalyzer, type Analyzer } from '@hopline/reasoning';
import { createGuard, DEFAULT_BREAKER, downstreamDeadline } from '@hopline/resilience';
import { warmUp } from '@hopline/runtime';
import type { HealthReport, HoplineMetrics, Logger } from '@hopline/telemetry';
import { trace } from '@opentelemetry/api';
import type { Config } from './config.js';

export interface QueryUnderstandingDeps {
  config: Pick<
    Config,
    | 'GRPC_HOST'
    | 'GRPC_PORT'
    | 'GRPC_TLS_CA'
    | 'GRPC_TLS_CERT'
    | 'GRPC_TLS_KEY'
    | 'OPENAI_BASE_URL'
    | 'OPENAI_API_KEY'
    | 'PLANNER_MODEL'
  >;
  logger: Logger;
  metrics: HoplineMetrics;
}

export interface QueryUnderstandingService {
  readonly port: number;
  /** The analyzer it serves, for a caller in the same process (the embedded mode). */
  readonly analyzer: Analyzer;
  health(): Promise<HealthReport>;
  stop(): Promise<void>;
}

/** Invented questions in both scripts the rules read: a Chinese one is what loads jieba's dictionary. */
const WARM_UP_QUESTIONS = [
  'Which river flows past the town where the lighthouse keeper was born?',
  '灯塔看守人出生的小镇旁边流过哪条河？',
];

/**
 * The rules on the invented questions: jieba's dictionary and tagger (~170 ms) and the rules'
 * code load before the first Analyze, which cold took 30–100 × its fiftieth. By the rules
 * alone: a start-up must not spend the planner model's budget or trip its breaker.
 */
const warmUpCalls = (rulesOnly: Analyzer) =>
  WARM_UP_QUESTIONS.map((question) => () => rulesOnly.analyze(question, { deadlineUnixMs: Date.now() + 60_000 }));

/** Serves gRPC Analyze: rules first, the planner model only where the rules cannot decide. */
export async function startQueryUnderstandingService({
  config,
  logger,
  metrics,
}: QueryUnderstandingDeps): Promise<QueryUnderstandingService> {
  const guard = createGuard({
    downstream: 'planner-model',
    breaker: DEFAULT_BREAKER,
    logger,
    metrics,
  });
  const chat = config.OPENAI_BASE_URL
    ? createOpenAiChatModel({
        baseURL: config.OPENAI_BASE_URL,
        apiKey: config.OPENAI_API_KEY,
        model: config.PLANNER_MODEL,
        guard,
        metrics,
      })
    : undefined;
  const analyzer = createAnalyzer({ ...(chat ? { chat } : {}), logger });
  // Before it listens, so that it is not ready (gRPC health, /readyz) until its first Analyze is as fast as its hundredth.
  await warmUp(warmUpCalls(createAnalyzer({ logger })), logger);

  const tls = mutualTlsFrom(config);
  const server = createGrpcServer({ logger, metrics, ...(tls ? { credentials: tls.server() } : {}) });
  server.addService(loadHoplineGrpc().hopline.v1.QueryUnderstanding, {
    async Analyze(request, call) {
      const ctx = requireRequestContext(request.ctx);
      // A blank question would cost planner calls to analyze nothing.
      if (request.question.trim() === '') throw new ValidationError('question is empty');
      // The planner model's calls end short of this call's deadline: when they hang, the rules'
      // answer still reaches the caller.
      const analysis = await analyzer.analyze(request.question, {
        deadlineUnixMs: downstreamDeadline(Math.min(ctx.deadlineUnixMs, call.deadlineUnixMs)),
        signal: call.signal,
      });
      trace.getActiveSpan()?.setAttributes({
        'hopline.question_id': ctx.questionId,
        'hopline.route': analysis.route,
        'hopline.decided_by': analysis.decidedBy,
      });
      return analysis;
    },
  });
  const port = await server.listen(config.GRPC_HOST, config.GRPC_PORT);
  logger.info('query-understanding ready', { planner: chat ? chat.model : 'rules only' });

  return {
    port,
    analyzer,
    async health() {
      return { ok: true, details: { port, plannerBreaker: guard.state } };
    },
    async stop() {
      await server.shutdown();
      guard.shutdown();
    },
  };
}
