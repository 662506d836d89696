import { loadHoplineGrpc, requireRequestContext, type Chunk__Output, type RankedChunk } from '@hopline/contracts';
import { createGrpcServer, mutualTlsFrom } from '@hopline/grpc';
import { createGuard, DEFAULT_BREAKER, downstreamDeadline } from '@hopline/resilience';
import { warmUp } from '@hopline/runtime';
import {
  createCrossEncoderClient,
  createLexicalScorer,
  createReranker,
  inProcessGuard,
  type Reranker,
} from '@hopline/retrieval';
import type { HealthReport, HoplineMetrics, Logger } from '@hopline/telemetry';
import { trace } from '@opentelemetry/api';
import type { Config } from './config.js';

export interface RerankerServiceDeps {
  config: Pick<
    Config,
    | 'GRPC_HOST'
    | 'GRPC_PORT'
    | 'GRPC_TLS_CA'
    | 'GRPC_TLS_CERT'
    | 'GRPC_TLS_KEY'
    | 'RERANK_URL'
    | 'RERANK_API'
    | 'RERANK_API_KEY'
    | 'RERANK_MODEL'
    | 'RERANK_MAX_BATCH'
    | 'RERANK_KEEP'
    | 'MMR_KEEP'
    | 'MMR_LAMBDA'
    | 'TOKEN_BUDGET'
  >;
  logger: Logger;
  metrics: HoplineMetrics;
}

export interface RerankerService {
  readonly port: number;
  /** What its Rerank call does, for a caller in the same process (the embedded mode). */
  readonly rerank: Reranker['rerank'];
  health(): Promise<HealthReport>;
  stop(): Promise<void>;
}

/** A kept chunk as its position in the request, its rerank score, and how much of its text is left. */
function rankedChunk(kept: Chunk__Output, sent: readonly Chunk__Output[], position: number | undefined): RankedChunk {
  const original = position === undefined ? undefined : sent[position];
  if (position === undefined || original === undefined) throw new Error('a kept chunk has no position in the request');
  return {
    position,
    rerankScore: kept.scores?.rerank ?? 0,
    textLength: kept.text.length < original.text.length ? kept.text.length : 0,
  };
}

/** Invented chunks in both scripts the tokenizers read: a Chinese text is what loads jieba's dictionary. */
const WARM_UP_CHUNKS: Chunk__Output[] = [
  'The lighthouse keeper painted the tower red in the spring of 1911.',
  '灯塔看守人在一九一一年春天把塔漆成了红色。',
].map((text, index) => ({ chunkId: `warm-up-${index}`, docId: 'warm-up', title: '', text }) as Chunk__Output);
const WARM_UP_QUERIES = ['Who painted the lighthouse tower red?', '谁把灯塔漆成了红色？'];

/**
 * Rerank's whole path (scoring, MMR, compression) on the invented chunks: jieba's dictionary
 * (~170 ms) and the scorer's and MMR's code load before the first call, which cold took 5–80 ×
 * its fiftieth. Scored by the lexical scorer alone: a cross-encoder is a remote service, and a
 * start-up must not hang on it or trip its breaker.
 */
const warmUpCalls = (lexicalReranker: Reranker) =>
  WARM_UP_QUERIES.map(
    (query) => () => lexicalReranker.rerank({ query, chunks: WARM_UP_CHUNKS, deadlineUnixMs: Date.now() + 60_000 }),
  );

/**
 * Serves gRPC Rerank: the cross-encoder behind RERANK_URL when there is one (under its own
 * deadline and breaker, with the lexical scorer taking over when it fails), else the lexical
 * scorer alone; then MMR for diversity and compression to the token budget.
 */
export async function startRerankerService({ config, logger, metrics }: RerankerServiceDeps): Promise<RerankerService> {
  const lexical = createLexicalScorer();
  const defaults = {
    keep: config.RERANK_KEEP,
    mmrKeep: config.MMR_KEEP,
    lambda: config.MMR_LAMBDA,
    tokenBudget: config.TOKEN_BUDGET,
  };
  // Only the cross-encoder, a remote dependency, gets a breaker; the lexical scorer works in process.
  const guard = config.RERANK_URL
    ? createGuard({ downstream: 'cross-encoder', breaker: DEFAULT_BREAKER, logger, metrics })
    : undefined;
  const reranker = createReranker({
    ...(config.RERANK_URL && guard
      ? {
          scorer: createCrossEncoderClient({
            url: config.RERANK_URL,
            api: config.RERANK_API,
            ...(config.RERANK_API_KEY ? { apiKey: config.RERANK_API_KEY } : {}),
            ...(config.RERANK_MODEL ? { model: config.RERANK_MODEL } : {}),
            maxBatch: config.RERANK_MAX_BATCH,
          }),
          guard,
          fallback: lexical,
        }
      : { scorer: lexical, guard: inProcessGuard }),
    defaults,
  });

  const rerank: Reranker['rerank'] = async (input) => {
    const result = await reranker.rerank(input);
    if (result.fallback) metrics.degradedRetrievals.inc({ path: 'rerank', reason: 'cross_encoder_unavailable' });
    return result;
  };

  // Before it listens, so that it is not ready (gRPC health, /readyz) until its first Rerank is as fast as its hundredth.
  await warmUp(warmUpCalls(createReranker({ scorer: lexical, guard: inProcessGuard, defaults })), logger);

  const tls = mutualTlsFrom(config);
  const server = createGrpcServer({ logger, metrics, ...(tls ? { credentials: tls.server() } : {}) });
  server.addService(loadHoplineGrpc().hopline.v1.Reranker, {
    async Rerank(request, call) {
      const ctx = requireRequestContext(request.ctx);
      const result = await rerank({
        query: request.query,
        chunks: request.chunks,
        topN: request.topN,
        tokenBudget: request.tokenBudget,
        // The cross-encoder's call ends short of this call's deadline: when it hangs, the
        // lexical scores still reach the caller.
        deadlineUnixMs: downstreamDeadline(Math.min(ctx.deadlineUnixMs, call.deadlineUnixMs)),
        signal: call.signal,
      });
      trace.getActiveSpan()?.setAttributes({
        'hopline.question_id': ctx.questionId,
        'hopline.rerank.scorer': result.scorer,
        'hopline.rerank.fallback': result.fallback,
        'hopline.rerank.kept': result.chunks.length,
      });
      if (!request.replyByPosition) return result;
      const { chunks, positions, ...rest } = result;
      return { ...rest, ranked: chunks.map((chunk, index) => rankedChunk(chunk, request.chunks, positions[index])) };
    },
  });
  const port = await server.listen(config.GRPC_HOST, config.GRPC_PORT);
  logger.info('reranker ready', { scorer: config.RERANK_URL ? `cross-encoder at ${config.RERANK_URL}` : 'lexical' });

  return {
    port,
    rerank,
    async health() {
      return { ok: true, details: { port, ...(guard ? { crossEncoderBreaker: guard.state } : {}) } };
    },
    async stop() {
      await server.shutdown();
      guard?.shutdown();
    },
  };
}
