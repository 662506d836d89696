import type { ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { busHealth, type Bus, type DurableStream, type KeyValueStore } from '@hopline/bus';
import {
  BusUnavailableError,
  codecs,
  documentBodyStream,
  isBusUnavailable,
  loadHoplineGrpc,
  subjects,
  toHoplineError,
} from '@hopline/contracts';
import { watchOperatorControls, type QuestionStreams } from '@hopline/questions';
import { createGrpcServer } from '@hopline/grpc';
import { createGuard } from '@hopline/resilience';
import type { HealthReport, HoplineMetrics, Logger } from '@hopline/telemetry';
import { Admission, KeyRateLimiter, SharedRateLimiter } from './admission.js';
import type { ApiKeyStore } from './api-keys.js';
import { AskService } from './ask-service.js';
import { AnswerCache } from './cache/answer-cache.js';
import { MemoryCacheStore } from './cache/memory-store.js';
import { RedisCacheStore } from './cache/redis-store.js';
import type { Config } from './config.js';
import { Drain } from './drain.js';
import { createGatewayMetrics } from './gateway-metrics.js';
import { answerGatewayHandlers, knowledgeBaseHandlers } from './grpc-service.js';
import { createHttpApp } from './http/app.js';
import { ResponsesInFlight } from './http/responses-in-flight.js';
import { KbService } from './kb-service.js';
import { QuestionRegistry } from './question-registry.js';
import { QuestionTraces } from './question-traces.js';
import { problems } from './problem.js';
import { loadStaticSite } from './static-site.js';
import { WorkerLagBoard } from './worker-lag.js';

/** The gateway's settings: its config schema's values (the embedded mode passes its own). */
export type GatewayConfig = Pick<
  Config,
  | 'HTTP_HOST'
  | 'HTTP_PORT'
  | 'GRPC_HOST'
  | 'GRPC_PORT'
  | 'REDIS_URL'
  | 'CACHE_TTL_SECONDS'
  | 'CACHE_MAX_ENTRIES'
  | 'QUESTION_TIMEOUT_MS'
  | 'ACCEPT_TIMEOUT_MS'
  | 'ASK_BREAKER_RESET_MS'
  | 'DEFAULT_MAX_HOPS'
  | 'MAX_QUESTION_CHARS'
  | 'MAX_BODY_BYTES'
  | 'HTTP_HEADERS_TIMEOUT_MS'
  | 'HTTP_REQUEST_TIMEOUT_MS'
  | 'HTTP_KEEP_ALIVE_TIMEOUT_MS'
  | 'INGEST_MAX_DOCUMENT_BYTES'
  | 'SSE_HEARTBEAT_MS'
  | 'STREAM_STALL_MS'
  | 'RESUME_GRACE_MS'
  | 'REPLAY_BUFFER_EVENTS'
  | 'MAX_IN_FLIGHT'
  | 'MAX_IN_FLIGHT_PER_TENANT'
  | 'RATE_PER_KEY_PER_SECOND'
  | 'RATE_BURST_PER_KEY'
  | 'SHUTDOWN_GRACE_MS'
>;

export interface AnswerGatewayOptions {
  config: GatewayConfig;
  bus: Bus;
  /** The question queue it enqueues questions on and the log their events are read from. */
  questions: QuestionStreams;
  /** The durable stream documents are ingested through. */
  ingest: DurableStream;
  /** Where the hop-reasoner stores reasoning traces, by question id. */
  traces: KeyValueStore;
  /** The kbs bucket: the knowledge bases tenants created. */
  kbRecords: KeyValueStore;
  keys: ApiKeyStore;
  logger: Logger;
  metrics: HoplineMetrics;
  /** The answer cache; without one the gateway builds it from the config and closes it on stop. */
  cache?: AnswerCache;
}

export interface StopOptions {
  /**
   * How long running questions may take to finish before they end with an error event, and
   * requests under way (uploads, kb writes) before their connections are closed. Default SHUTDOWN_GRACE_MS.
   */
  graceMs?: number;
}

export interface AnswerGateway {
  readonly httpPort: number;
  readonly grpcPort: number;
  /** For the ops server's /healthz. */
  health(): HealthReport;
  /**
   * Stops taking questions and writes, lets running questions and requests under way finish
   * within the grace period, ends the questions left with a retryable `unavailable` error event
   * (cancelling them downstream), then closes the servers, and with them the connections of
   * requests still unanswered. The bus is the caller's to drain.
   */
  stop(options?: StopOptions): Promise<void>;
}

/** Time past a question's deadline left to the hop-reasoner's own terminal event. */
const DEADLINE_SLACK_MS = 1_000;
/** Opens when half of at least 5 asks in 10 s were taken by no hop-reasoner in time. */
const ASK_BREAKER = { errorThresholdPercentage: 50, volumeThreshold: 5, rollingCountTimeoutMs: 10_000 };
/** How often the gRPC health status is brought in line with the gateway's health. */
const GRPC_HEALTH_SYNC_MS = 1_000;
/** How long finished streams may take to flush their last bytes once every question ended. */
const CLOSE_FLUSH_MS = 1_000;

/** The answer cache the config asks for: Redis when REDIS_URL is set, else an in-process LRU. */
export async function createAnswerCache(
  config: Pick<Config, 'REDIS_URL' | 'CACHE_TTL_SECONDS' | 'CACHE_MAX_ENTRIES'>,
  logger: Logger,
  metrics: HoplineMetrics,
): Promise<AnswerCache> {
  const store = config.REDIS_URL
    ? await RedisCacheStore.connect(config.REDIS_URL, {
        onConnectionError: (error) => logger.warn('answer cache: Redis connection error', { error }),
      })
    : new MemoryCacheStore(config.CACHE_MAX_ENTRIES);
  return new AnswerCache(store, {
    ttlMs: config.CACHE_TTL_SECONDS * 1000,
    lookups: metrics.cacheLookups,
    onError: (message, error) => logger.warn(message, { error }),
  });
}

/** Starts the HTTP and gRPC servers of the gateway over the given bus. */
export async function startAnswerGateway(options: AnswerGatewayOptions): Promise<AnswerGateway> {
  const { config, bus, logger, metrics } = options;
  const ownsCache = options.cache === undefined;
  const cache = options.cache ?? (await createAnswerCache(config, logger, metrics));
  const onError = (message: string, error: unknown) => logger.warn(message, { error });

  // Waiting for a hop-reasoner to take a question is the gateway's one wait on the fleet: a
  // breaker keeps a dead or full fleet from costing every client the accept timeout.
  const askGuard = createGuard({
    downstream: 'hop-reasoner',
    breaker: { ...ASK_BREAKER, resetTimeoutMs: config.ASK_BREAKER_RESET_MS },
    logger,
    metrics,
  });

  const counters = createGatewayMetrics(metrics.registry, () => registry.inFlight);
  const registry = new QuestionRegistry({
    bus,
    ...options.questions,
    accept: async ({ enqueue, taken }, deadlineUnixMs) => {
      // With NATS down the question could only wait out the accept timeout; the client hears why at once.
      const connection = bus.connection();
      if (!connection.connected) {
        throw new BusUnavailableError(`message bus unavailable: ${connection.reason ?? 'disconnected'}`);
      }
      // The accept timeout is the time a stored question waits for a hop-reasoner: storing it may
      // take a cluster's leader election (4-9 s), which the enqueue waits out within the deadline.
      // An open breaker refuses at once, before the question is stored: stored, a refused question
      // would still be run by the first hop-reasoner that frees up.
      if (askGuard.state !== 'open') await enqueue();
      await askGuard.call(taken, { deadlineUnixMs, capMs: config.ACCEPT_TIMEOUT_MS });
    },
    graceMs: config.RESUME_GRACE_MS,
    replayLimit: config.REPLAY_BUFFER_EVENTS,
    deadlineSlackMs: DEADLINE_SLACK_MS,
    onError,
    onFinished: (run) => {
      if (run.cancelReason) counters.cancellations.inc({ reason: run.cancelReason });
    },
    onCancelled: (reason) => counters.cancellations.inc({ reason }),
  });
  const rates = { ratePerSecond: config.RATE_PER_KEY_PER_SECOND, burst: config.RATE_BURST_PER_KEY };
  const ownRate = new KeyRateLimiter(rates);
  const rateRedis = config.REDIS_URL ? await connectRateRedis(config.REDIS_URL, logger) : undefined;
  const admission = new Admission({
    ...rates,
    rate: rateRedis
      ? new SharedRateLimiter({
          ...rates,
          redis: rateRedis,
          fallback: ownRate,
          onError: (error) =>
            logger.warn('admission: Redis did not answer; this instance counts rates alone', { error }),
        })
      : ownRate,
    maxInFlight: config.MAX_IN_FLIGHT,
    inFlight: () => registry.inFlight,
    maxInFlightPerTenant: config.MAX_IN_FLIGHT_PER_TENANT ?? Math.ceil(config.MAX_IN_FLIGHT / 2),
    inFlightOf: (tenantId) => registry.inFlightOf(tenantId),
    onRejected: (reason) => counters.admissionRejections.inc({ reason }),
  });
  // The controls the hop-reasoners reason under change their answers: cached answers are keyed by them.
  const controls = await watchOperatorControls({ bus, logger });
  const drain = new Drain();
  const asks = new AskService({
    registry,
    cache,
    admission,
    drain,
    controls: controls.current,
    settings: {
      questionTimeoutMs: config.QUESTION_TIMEOUT_MS,
      defaultMaxHops: config.DEFAULT_MAX_HOPS,
    },
    onResume: (transport) => counters.resumes.inc({ transport }),
  });

  const bumpKb = async (tenantId: string, kbId: string) => {
    try {
      await cache.kbChanged(tenantId, kbId);
    } catch (error) {
      logger.warn('answer cache: could not bump a kb version; its answers bypass the cache until a bump succeeds', {
        tenantId,
        kbId,
        error,
      });
    }
  };
  // Every instance hears every change (no queue group): each must stop serving stale answers.
  const kbChanges = bus.subscribe(subjects.kbChangedAll, {}, async (message) => {
    const change = codecs.kbChanged.decode(message.data);
    await bumpKb(change.tenantId, change.kbId);
  });
  // A change announced while the connection was down never arrives.
  const stopWatchingReconnects = bus.onReconnected(() => cache.changesMayHaveBeenMissed());

  const workerLag = new WorkerLagBoard(bus);
  const kbs = new KbService({
    records: options.kbRecords,
    stats: (tenantId, kbIds) => kbStats(bus, options.ingest, tenantId, kbIds),
    workerLag: () => workerLag.live(),
  });

  const documentBodies = await bus.durableStream(documentBodyStream);
  const http = await createHttpApp({
    asks,
    drain,
    kbs,
    keys: options.keys,
    traces: new QuestionTraces(options.traces, options.questions.log),
    ingest: options.ingest,
    documentBodies,
    site: loadStaticSite(),
    logger,
    settings: {
      maxBodyBytes: config.MAX_BODY_BYTES,
      maxDocumentBytes: config.INGEST_MAX_DOCUMENT_BYTES,
      maxQuestionChars: config.MAX_QUESTION_CHARS,
      sseHeartbeatMs: config.SSE_HEARTBEAT_MS,
      sseStallMs: config.STREAM_STALL_MS,
      sseRetryMs: 1_000,
      headersTimeoutMs: config.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: config.HTTP_REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: config.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    },
    kbWritten: bumpKb,
    chargeIngest: (keyId) => admission.chargeKey(keyId, 'ingest'),
    lookupDocument: (tenantId, kbId, docId) => lookupDocument(bus, options.ingest, { tenantId, kbId, docId }),
  });
  const httpServer = http.server;
  let stopping: Promise<void> | undefined;
  // While stopping, connections are closed as soon as no response is in flight, rather than
  // left open in keep-alive (or opened by a client and never used) until the flush bound.
  const responses = new ResponsesInFlight();
  const closeConnectionsWhenQuiet = () => {
    if (responses.none) httpServer.closeAllConnections();
    else httpServer.closeIdleConnections();
  };
  httpServer.on('request', (_request, response: ServerResponse) => responses.track(response));
  responses.onClose(() => {
    if (stopping) setImmediate(closeConnectionsWhenQuiet);
  });
  const grpcServer = createGrpcServer({ logger, metrics, edge: true, streamStallMs: config.STREAM_STALL_MS });
  const { AnswerGateway, KnowledgeBases } = loadHoplineGrpc().hopline.v1;
  grpcServer.addService(
    AnswerGateway,
    answerGatewayHandlers({
      asks,
      drain,
      keys: options.keys,
      askLimits: { maxQuestionChars: config.MAX_QUESTION_CHARS },
    }),
  );
  grpcServer.addService(KnowledgeBases, knowledgeBaseHandlers({ kbs, drain, keys: options.keys }));

  const health = (): HealthReport => {
    const busState = busHealth(bus);
    return {
      ok: stopping === undefined && busState.ok,
      details: {
        inFlight: registry.inFlight,
        cache: cache.kind,
        bus: busState.details,
        ...(stopping ? { stopping: true } : {}),
      },
    };
  };
  // The kubelet probes the gateway through gRPC health: it says what /readyz says.
  const grpcHealthSync = setInterval(() => grpcServer.setAllServing(health().ok), GRPC_HEALTH_SYNC_MS);
  grpcHealthSync.unref();

  let httpPort: number;
  let grpcPort: number;
  try {
    await http.listen({ host: config.HTTP_HOST, port: config.HTTP_PORT });
    httpPort = (httpServer.address() as AddressInfo).port;
    grpcPort = await grpcServer.listen(config.GRPC_HOST, config.GRPC_PORT);
  } catch (error) {
    clearInterval(grpcHealthSync);
    kbChanges.unsubscribe();
    stopWatchingReconnects();
    workerLag.stop();
    controls.stop();
    askGuard.shutdown();
    await http.close();
    await grpcServer.shutdown({ graceMs: 0 });
    if (ownsCache) await cache.close();
    rateRedis?.disconnect();
    throw error;
  }

  return {
    httpPort,
    grpcPort,
    health,
    stop({ graceMs = config.SHUTDOWN_GRACE_MS } = {}) {
      stopping ??= (async () => {
        drain.begin();
        const httpClosed = http.close();
        closeConnectionsWhenQuiet();
        // The gRPC server's own grace outlasts ours, so its streams get their terminal event before it forces them down.
        const grpcClosed = grpcServer.shutdown({ graceMs: graceMs + CLOSE_FLUSH_MS });
        // Uploads and kb writes under way share the questions' grace: closing their connections
        // mid-body would leave a client not knowing which of its documents went in.
        const questionsEnded = async () => {
          if (await registry.whenIdle(graceMs)) return;
          logger.warn('questions still running after the shutdown grace period; ending them', {
            inFlight: registry.inFlight,
            graceMs,
          });
          await registry.cancelAll('shutdown');
        };
        const requestsAnswered = async () => {
          if (await responses.whenAnswered(graceMs)) return;
          logger.warn('requests still unanswered after the shutdown grace period; closing their connections', {
            graceMs,
          });
        };
        await Promise.all([questionsEnded(), requestsAnswered()]);
        clearInterval(grpcHealthSync);
        kbChanges.unsubscribe();
        stopWatchingReconnects();
        workerLag.stop();
        controls.stop();
        closeConnectionsWhenQuiet();
        const flushTimer = setTimeout(() => httpServer.closeAllConnections(), CLOSE_FLUSH_MS);
        await Promise.all([httpClosed, grpcClosed]);
        clearTimeout(flushTimer);
        registry.clear();
        askGuard.shutdown();
        if (ownsCache) await cache.close();
        rateRedis?.disconnect();
      })();
      return stopping;
    },
  };
}

/**
 * The Redis the per-key rates are shared in. A command fails at once while Redis is away
 * (no offline queue, a short timeout), so that admission falls back to the instance's own
 * buckets instead of making every ask wait.
 */
async function connectRateRedis(url: string, logger: Logger): Promise<Redis> {
  const redis = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: 250,
  });
  // Without a listener, ioredis's error event would crash the process on a Redis restart.
  redis.on('error', (error: Error) => logger.warn('admission: Redis connection error', { error }));
  await redis.connect().catch((error: unknown) => logger.warn('admission: Redis not reachable yet', { error }));
  return redis;
}

/** A lookup waits for a worker to apply what was accepted before it; beyond this the client retries. */
const LOOKUP_TIMEOUT_MS = 5_000;

/**
 * The stream sequence a worker's index must have applied before it answers for these kbs: that
 * of the newest ingest command stored for any of them, so that a write accepted a moment ago is
 * counted. Only these kbs' commands count: another tenant's bulk ingest, stored after them,
 * does not hold the answer back.
 */
async function lastWriteTo(ingest: DurableStream, tenantId: string, kbIds: readonly string[]): Promise<number> {
  const newest = await Promise.all(kbIds.map((kbId) => ingest.last(subjects.ingest(tenantId, kbId))));
  return Math.max(0, ...newest.map((stored) => stored?.seq ?? 0));
}

/**
 * Asks a retrieval worker whether a document is indexed, once its index has applied every
 * ingest command stored for the document's kb before the question: a document accepted a
 * moment ago is found.
 */
async function lookupDocument(
  bus: Bus,
  ingest: DurableStream,
  document: { tenantId: string; kbId: string; docId: string },
): Promise<{ exists: boolean; version: number }> {
  const afterSeq = await lastWriteTo(ingest, document.tenantId, [document.kbId]);
  try {
    const reply = await bus.request(subjects.documentLookup, codecs.documentLookup.encode({ ...document, afterSeq }), {
      timeoutMs: LOOKUP_TIMEOUT_MS,
    });
    return codecs.documentState.decode(reply.data);
  } catch (error) {
    throw indexUnavailable(error, 'look the document up');
  }
}

/** What a retrieval worker's index holds of the tenant's kbs, counting every ingest command stored for them before the call. */
async function kbStats(
  bus: Bus,
  ingest: DurableStream,
  tenantId: string,
  kbIds: readonly string[],
): Promise<Array<{ documents: number; chunks: number }>> {
  if (kbIds.length === 0) return [];
  const afterSeq = await lastWriteTo(ingest, tenantId, kbIds);
  try {
    const reply = await bus.request(
      subjects.kbStats,
      codecs.kbStatsRequest.encode({ tenantId, kbIds: [...kbIds], afterSeq }),
      { timeoutMs: LOOKUP_TIMEOUT_MS },
    );
    return codecs.kbStatsResponse.decode(reply.data).kbs;
  } catch (error) {
    throw indexUnavailable(error, 'count the documents');
  }
}

/** A request to the retrieval workers that failed, as the 503 a client retries after, when it is one. */
function indexUnavailable(error: unknown, what: string): unknown {
  const failure = toHoplineError(error);
  if (failure.code === 'no_responders') return problems.unavailable(`no retrieval worker is running to ${what}`, 1_000);
  if ((failure.code === 'unavailable' && !isBusUnavailable(failure)) || failure.code === 'deadline_exceeded')
    return problems.unavailable('the search index is still applying recent changes; retry shortly', 1_000);
  return failure;
}
