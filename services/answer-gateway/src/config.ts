import { RETRIEVE_QUERY_MAX_CHARS } from '@hopline/contracts';
import { env, jetstreamEnv, natsSecurityEnv, serviceEnv } from '@hopline/config';
import { z } from 'zod';

export const configSchema = z.object({
  ...serviceEnv,
  ...jetstreamEnv,
  NATS_URL: env.endpoints('NATS_USER and NATS_PASSWORD (or NATS_CREDS, NATS_TOKEN)').default('nats://127.0.0.1:4222'),
  ...natsSecurityEnv,
  HTTP_HOST: env.string('0.0.0.0'),
  HTTP_PORT: env.port(8080),
  GRPC_HOST: env.string('0.0.0.0'),
  GRPC_PORT: env.port(50051),
  /** JSON file of API keys (hashed); see docs. */
  API_KEYS_FILE: z.string().min(1).optional(),
  /** The same JSON inline, for containers that take secrets as variables. */
  API_KEYS: z.string().min(1).optional(),
  /** Answer cache in Redis; an in-memory LRU without it. */
  REDIS_URL: env.url().optional(),
  /** Lifetime of a cached answer; ingestion invalidates earlier through the kb version. */
  CACHE_TTL_SECONDS: env.positiveInt(3_600),
  /** Entries of the in-memory LRU (unused with Redis); 0 keeps nothing, so every question runs (benchmarks). */
  CACHE_MAX_ENTRIES: z.coerce.number().int().min(0).default(1_000),
  QUESTION_TIMEOUT_MS: env.positiveInt(30_000),
  /** How long a hop-reasoner may take to acknowledge a question before the ask fails. */
  ACCEPT_TIMEOUT_MS: env.positiveInt(2_000),
  /** How long the breaker in front of the hop-reasoners stays open before it lets one ask through. */
  ASK_BREAKER_RESET_MS: env.positiveInt(5_000),
  DEFAULT_MAX_HOPS: z.coerce.number().int().min(1).max(5).default(3),
  /** At most RETRIEVE_QUERY_MAX_CHARS: the question goes to the retrieval-workers as a query of its own. */
  MAX_QUESTION_CHARS: z.coerce.number().int().positive().max(RETRIEVE_QUERY_MAX_CHARS).default(2_000),
  /** The largest body of an ask or any other request but ingestion. */
  MAX_BODY_BYTES: env.positiveInt(65_536),
  /** A client must have sent its request headers within this; else 408 and the connection closes. */
  HTTP_HEADERS_TIMEOUT_MS: env.positiveInt(10_000),
  /**
   * ... and its body may bring nothing new for no longer than this while the gateway waits for it
   * (the time between two reads, as nginx's client_body_timeout): a half-sent body does not hold a
   * connection longer, while a long streamed upload that keeps coming is not cut.
   */
  HTTP_REQUEST_TIMEOUT_MS: env.positiveInt(30_000),
  /** An idle keep-alive connection is closed after this. */
  HTTP_KEEP_ALIVE_TIMEOUT_MS: env.positiveInt(5_000),
  /**
   * The largest document ingestion takes: a JSON body, or one line of an NDJSON stream (whose
   * length is unbounded, since it is read a line at a time). 50 MiB by default.
   */
  INGEST_MAX_DOCUMENT_BYTES: env.positiveInt(50 * 1024 * 1024),
  /** A comment line on an SSE stream idle this long keeps proxies from closing it. */
  SSE_HEARTBEAT_MS: env.positiveInt(15_000),
  /**
   * An answer stream (SSE or gRPC) whose client takes none of what was sent for this long is
   * ended (the client may resume): a client that stopped reading does not hold its connection
   * and the question's events for good.
   */
  STREAM_STALL_MS: env.positiveInt(30_000),
  /**
   * How long a question outlives its last client: a reconnect within it resumes the stream,
   * and a question without clients for longer is cancelled.
   */
  RESUME_GRACE_MS: env.positiveInt(10_000),
  /** Events kept per question for resumption; older ones cannot be resumed from. */
  REPLAY_BUFFER_EVENTS: env.positiveInt(20_000),
  /** Questions this instance runs at once; beyond it, 429. */
  MAX_IN_FLIGHT: env.positiveInt(64),
  /**
   * What one tenant may hold of MAX_IN_FLIGHT while another tenant's questions run too; half
   * of it (rounded up) when unset. A tenant alone may use every slot.
   */
  MAX_IN_FLIGHT_PER_TENANT: z.coerce.number().int().positive().optional(),
  /** Questions per second each API key may ask on this instance (token bucket refill). */
  RATE_PER_KEY_PER_SECOND: z.coerce.number().positive().default(5),
  /** Questions a key may ask in a burst (token bucket size). */
  RATE_BURST_PER_KEY: env.positiveInt(20),
  /** On SIGTERM, how long running streams may take to finish before they end with an error. */
  SHUTDOWN_GRACE_MS: env.positiveInt(10_000),
});

export type Config = z.infer<typeof configSchema>;
