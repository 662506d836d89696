/**
 * How JetStream keeps what Hopline stores: how many copies, on which storage, and for how long.
 * Every stream and bucket an adapter creates or updates takes its settings from here, so that
 * one configuration (JETSTREAM_REPLICAS and the retention variables) governs all of them.
 */

/**
 * What a stream or bucket holds decides its limits. `keep` is kept whole: the ingest stream is
 * the source every new retrieval worker builds its index from, so nothing may age out of it.
 */
export type RetentionClass = 'keep' | 'dead-letters' | 'events' | 'traces';

export interface RetentionLimits {
  /** Messages older than this are removed; 0 keeps them regardless of age. */
  maxAgeMs: number;
  /** The oldest messages are removed beyond this size; 0 sets no bound. */
  maxBytes: number;
}

export interface JetStreamPolicy {
  /** Copies of each stream and bucket: 1 on a single server, 3 on the three-node cluster. */
  replicas: number;
  storage: 'file' | 'memory';
  limits: Record<Exclude<RetentionClass, 'keep'>, RetentionLimits>;
}

const HOUR_MS = 3_600_000;
const GIB = 1024 ** 3;

/** The defaults the services' configuration starts from (`jetstreamEnv` in @hopline/config). */
export const DEFAULT_JETSTREAM_POLICY: JetStreamPolicy = {
  replicas: 1,
  storage: 'file',
  limits: {
    'dead-letters': { maxAgeMs: 30 * 24 * HOUR_MS, maxBytes: GIB },
    events: { maxAgeMs: 24 * HOUR_MS, maxBytes: GIB },
    traces: { maxAgeMs: 7 * 24 * HOUR_MS, maxBytes: GIB },
  },
};

/** The environment variables of `jetstreamEnv`, as parsed. */
export interface JetStreamEnv {
  JETSTREAM_REPLICAS: number;
  JETSTREAM_STORAGE: 'file' | 'memory';
  DEAD_LETTERS_MAX_AGE_HOURS: number;
  DEAD_LETTERS_MAX_BYTES: number;
  EVENTS_MAX_AGE_HOURS: number;
  EVENTS_MAX_BYTES: number;
  TRACES_MAX_AGE_HOURS: number;
  TRACES_MAX_BYTES: number;
}

export function jetStreamPolicyFrom(env: JetStreamEnv): JetStreamPolicy {
  const limits = (hours: number, bytes: number): RetentionLimits => ({ maxAgeMs: hours * HOUR_MS, maxBytes: bytes });
  return {
    replicas: env.JETSTREAM_REPLICAS,
    storage: env.JETSTREAM_STORAGE,
    limits: {
      'dead-letters': limits(env.DEAD_LETTERS_MAX_AGE_HOURS, env.DEAD_LETTERS_MAX_BYTES),
      events: limits(env.EVENTS_MAX_AGE_HOURS, env.EVENTS_MAX_BYTES),
      traces: limits(env.TRACES_MAX_AGE_HOURS, env.TRACES_MAX_BYTES),
    },
  };
}

/** The limits of one retention class; `keep` has none. */
export function limitsOf(policy: JetStreamPolicy, retention: RetentionClass): RetentionLimits {
  return retention === 'keep' ? { maxAgeMs: 0, maxBytes: 0 } : policy.limits[retention];
}
