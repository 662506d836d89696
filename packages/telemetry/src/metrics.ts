import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** `hopline_breaker_state` values. */
export const BREAKER_STATE_VALUE = { closed: 0, halfOpen: 1, open: 2 } as const;

const LATENCY_BUCKETS_SECONDS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const HOP_BUCKETS = [1, 2, 3, 4, 5];
const HIT_BUCKETS = [0, 1, 2, 5, 10, 20, 50, 100, 200];
// How often the event-loop lag monitor samples the loop. prom-client's default (10 ms) wakes an
// idle process 100 times a second, 12–17 ms of CPU per second in each service (issue 14); a
// stall shorter than this is still measured when a sample lands in it.
const EVENT_LOOP_SAMPLE_MS = 100;

/**
 * The instruments the architecture names. Label values must come from small closed sets
 * (subject templates, method names, codes), never from question ids or text.
 */
export interface HoplineMetrics {
  readonly registry: Registry;
  /** One hop of the loop, retrieve → rerank → grade → extract; `hop` is 1..5. */
  readonly hopDuration: Histogram<'hop'>;
  readonly hopsPerQuestion: Histogram<'route'>;
  readonly stopReasons: Counter<'reason'>;
  /** 0 closed, 1 half-open, 2 open (`BREAKER_STATE_VALUE`). */
  readonly breakerState: Gauge<'downstream'>;
  readonly breakerTransitions: Counter<'downstream' | 'to'>;
  readonly breakerFailures: Counter<'downstream' | 'state'>;
  /** `path` is the retrieval path that was lost (bm25, vector) or the stage that fell back (rerank). */
  readonly degradedRetrievals: Counter<'path' | 'reason'>;
  /** Ingest commands given up on; `cause` is malformed, invalid or exhausted (retries used up). */
  readonly ingestDeadLetters: Counter<'cause'>;
  /** Ingest commands in the stream that this worker's index has not applied yet. */
  readonly ingestLag: Gauge<'worker'>;
  /** Chunks in this worker's `index` (lexical or vector), every tenant and kb together. */
  readonly indexChunks: Gauge<'worker' | 'index'>;
  /** One search of one retrieval path (bm25 or vector) as the worker ran it, failed ones included. */
  readonly retrievalPathDuration: Histogram<'path' | 'outcome'>;
  /** Candidates one path's search returned, before fusion. */
  readonly retrievalPathHits: Histogram<'path'>;
  /** Chunks a retrieval kept after fusing its paths. */
  readonly retrievalFusedSize: Histogram;
  /** The worker's entity graph, every tenant and kb together; `kind` is chunks, entities or edges (chunk–entity links). */
  readonly entityGraphSize: Gauge<'worker' | 'kind'>;
  /** One walk of the entity graph from a retrieval's seeds. */
  readonly entityGraphWalkDuration: Histogram;
  /** Retrievals that carried seeds; `graph` is walked, or none where the worker keeps no graph. */
  readonly seededRetrievals: Counter<'graph'>;
  /** The first hop's searches started beside the analysis; `outcome` is taken (the first hop used it) or spent (none did). */
  readonly earlyRetrievals: Counter<'outcome'>;
  /** The operators' multi-hop switch as this hop-reasoner applies it: 1 on, 0 off (every question single-shot). */
  readonly controlMultiHop: Gauge;
  /** The operators' hop cap as this hop-reasoner applies it. */
  readonly controlHopCap: Gauge;
  /** `result` is hit or miss. */
  readonly cacheLookups: Counter<'cache' | 'result'>;
  /** One request to a language model server (each attempt and repair); `operation` is chat or stream; `outcome` is ok or error. */
  readonly llmCalls: Counter<'model' | 'operation' | 'outcome'>;
  /** `kind` is prompt or completion, as the server's usage field reported them. */
  readonly llmTokens: Counter<'model' | 'kind'>;
  /** One request to a language model server, until its reply (a stream: until it opened). */
  readonly llmRequestDuration: Histogram<'model' | 'operation' | 'outcome'>;
  /** Failed requests; `type` is the Hopline error code (unavailable, deadline_exceeded, resource_exhausted…). */
  readonly llmErrors: Counter<'model' | 'operation' | 'type'>;
  /** `subject` is a subject template; `role` is client or server; `outcome` is ok or an error code. */
  readonly natsRequests: Counter<'subject' | 'role' | 'outcome'>;
  readonly natsRequestDuration: Histogram<'subject' | 'role' | 'outcome'>;
  /** `method` is `package.Service/Method`; `role` is client or server; `code` is the gRPC status name. */
  readonly grpcRequests: Counter<'method' | 'role' | 'code'>;
  readonly grpcRequestDuration: Histogram<'method' | 'role' | 'code'>;
}

export interface MetricsOptions {
  /** Process metrics (CPU, memory, event loop lag, GC). Default true. */
  defaultMetrics?: boolean;
}

/** A fresh registry for one service, labelled `service`, with every Hopline instrument on it. */
export function createMetrics(service: string, options: MetricsOptions = {}): HoplineMetrics {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  if (options.defaultMetrics ?? true)
    collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  const registers = [registry];

  return {
    registry,
    hopDuration: new Histogram({
      name: 'hopline_hop_duration_seconds',
      help: 'Duration of one hop of the reasoning loop',
      labelNames: ['hop'],
      buckets: LATENCY_BUCKETS_SECONDS,
      registers,
    }),
    hopsPerQuestion: new Histogram({
      name: 'hopline_hops_per_question',
      help: 'Hops a question used before it stopped',
      labelNames: ['route'],
      buckets: HOP_BUCKETS,
      registers,
    }),
    stopReasons: new Counter({
      name: 'hopline_stop_reasons_total',
      help: 'Why the reasoning loop stopped',
      labelNames: ['reason'],
      registers,
    }),
    breakerState: new Gauge({
      name: 'hopline_breaker_state',
      help: 'Circuit breaker state per downstream: 0 closed, 1 half-open, 2 open',
      labelNames: ['downstream'],
      registers,
    }),
    breakerTransitions: new Counter({
      name: 'hopline_breaker_transitions_total',
      help: 'Circuit breaker state changes per downstream and target state',
      labelNames: ['downstream', 'to'],
      registers,
    }),
    breakerFailures: new Counter({
      name: 'hopline_breaker_failures_total',
      help: 'Failed calls a circuit breaker counted, per downstream and the state it was in when the call failed',
      labelNames: ['downstream', 'state'],
      registers,
    }),
    degradedRetrievals: new Counter({
      name: 'hopline_degraded_retrievals_total',
      help: 'Retrievals or stages that answered with a degraded result',
      labelNames: ['path', 'reason'],
      registers,
    }),
    ingestDeadLetters: new Counter({
      name: 'hopline_ingest_dead_letters_total',
      help: 'Ingest commands terminated and published on the dead-letter subject',
      labelNames: ['cause'],
      registers,
    }),
    ingestLag: new Gauge({
      name: 'hopline_ingest_lag_messages',
      help: "Ingest commands in the stream not yet applied to this worker's index",
      labelNames: ['worker'],
      registers,
    }),
    indexChunks: new Gauge({
      name: 'hopline_index_chunks',
      help: "Chunks in this worker's lexical or vector index",
      labelNames: ['worker', 'index'],
      registers,
    }),
    retrievalPathDuration: new Histogram({
      name: 'hopline_retrieval_path_duration_seconds',
      help: 'Duration of one retrieval path (bm25 or vector) by outcome (ok or an error code)',
      labelNames: ['path', 'outcome'],
      buckets: LATENCY_BUCKETS_SECONDS,
      registers,
    }),
    retrievalPathHits: new Histogram({
      name: 'hopline_retrieval_path_hits',
      help: 'Candidates one retrieval path returned before fusion',
      labelNames: ['path'],
      buckets: HIT_BUCKETS,
      registers,
    }),
    retrievalFusedSize: new Histogram({
      name: 'hopline_retrieval_fused_size',
      help: 'Chunks a retrieval kept after fusion',
      buckets: HIT_BUCKETS,
      registers,
    }),
    entityGraphSize: new Gauge({
      name: 'hopline_entity_graph_size',
      help: "Chunks, entities and chunk-entity links in this worker's entity graph",
      labelNames: ['worker', 'kind'],
      registers,
    }),
    entityGraphWalkDuration: new Histogram({
      name: 'hopline_entity_graph_walk_duration_seconds',
      help: 'Duration of one entity graph walk from the seeds of a retrieval',
      buckets: LATENCY_BUCKETS_SECONDS,
      registers,
    }),
    seededRetrievals: new Counter({
      name: 'hopline_seeded_retrievals_total',
      help: 'Retrievals that carried seeds, by whether the entity graph was walked (walked) or none is kept (none)',
      labelNames: ['graph'],
      registers,
    }),
    earlyRetrievals: new Counter({
      name: 'hopline_early_retrievals_total',
      help: "The first hop's searches started beside the analysis, by whether the first hop took it (taken) or none did (spent)",
      labelNames: ['outcome'],
      registers,
    }),
    controlMultiHop: new Gauge({
      name: 'hopline_control_multi_hop',
      help: "The operators' multi-hop switch in force: 1 on, 0 off (every question single-shot)",
      registers,
    }),
    controlHopCap: new Gauge({
      name: 'hopline_control_hop_cap',
      help: "The operators' hop cap in force: no question takes more hops",
      registers,
    }),
    cacheLookups: new Counter({
      name: 'hopline_cache_lookups_total',
      help: 'Cache lookups by cache and result (hit or miss)',
      labelNames: ['cache', 'result'],
      registers,
    }),
    llmCalls: new Counter({
      name: 'hopline_llm_calls_total',
      help: 'Requests to a language model server by model, operation and outcome',
      labelNames: ['model', 'operation', 'outcome'],
      registers,
    }),
    llmRequestDuration: new Histogram({
      name: 'hopline_llm_request_duration_seconds',
      help: 'Duration of one request to a language model server',
      labelNames: ['model', 'operation', 'outcome'],
      buckets: LATENCY_BUCKETS_SECONDS,
      registers,
    }),
    llmErrors: new Counter({
      name: 'hopline_llm_errors_total',
      help: 'Failed requests to a language model server by model, operation and error type',
      labelNames: ['model', 'operation', 'type'],
      registers,
    }),
    llmTokens: new Counter({
      name: 'hopline_llm_tokens_total',
      help: 'Tokens used by model and kind (prompt or completion)',
      labelNames: ['model', 'kind'],
      registers,
    }),
    natsRequests: new Counter({
      name: 'hopline_nats_requests_total',
      help: 'NATS requests by subject template, role and outcome',
      labelNames: ['subject', 'role', 'outcome'],
      registers,
    }),
    natsRequestDuration: new Histogram({
      name: 'hopline_nats_request_duration_seconds',
      help: 'NATS request duration by subject template, role and outcome',
      labelNames: ['subject', 'role', 'outcome'],
      buckets: LATENCY_BUCKETS_SECONDS,
      registers,
    }),
    grpcRequests: new Counter({
      name: 'hopline_grpc_requests_total',
      help: 'gRPC calls by method, role and status code',
      labelNames: ['method', 'role', 'code'],
      registers,
    }),
    grpcRequestDuration: new Histogram({
      name: 'hopline_grpc_request_duration_seconds',
      help: 'gRPC call duration by method, role and status code',
      labelNames: ['method', 'role', 'code'],
      buckets: LATENCY_BUCKETS_SECONDS,
      registers,
    }),
  };
}
