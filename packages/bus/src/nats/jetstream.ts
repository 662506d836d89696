import { setTimeout as delay } from 'node:timers/promises';
import { ConflictError, jetstream, NoRespondersError, subjects, ValidationError } from '@hopline/contracts';
import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  NatsError,
  nanos,
  RetentionPolicy,
  type Consumer,
  type ConsumerInfo,
  type JetStreamManager,
  StorageType,
  type KV,
  type NatsConnection,
  type StreamConfig,
  type StreamInfo,
} from 'nats';
import {
  DEFAULT_DUPLICATE_WINDOW_MS,
  payloadBytes,
  type BusErrorReporter,
  type DurableConsumer,
  type DurableConsumerOptions,
  type DurableStream,
  type DurableStreamOptions,
  type KeyValueOptions,
  type BusKeyValueStore,
} from '../bus.js';
import { limitsOf, type JetStreamPolicy, type RetentionClass } from '../jetstream-policy.js';
import { assertValidKey, assertValidName } from '../names.js';
import { fromJetStreamError } from '../nats-errors.js';
import type { ConnectionWatch } from './connection-watch.js';
import { readStream } from './follow.js';
import { PullLoop } from './pull-loop.js';
import { StreamTail } from './stream-tail.js';
import { assertValidSubject, subjectMatches } from '../subjects.js';
import { fromMsgHdrs, toMsgHdrs } from '../wire-headers.js';

// Older servers take "+TERM <reason>" for an unknown ack and redeliver the message; the
// reason is only informational (it goes into the server's advisory), so it is left out there.
// 2.10.x releases are not all known to accept it, hence the conservative bound.
const TERM_REASON_SINCE = [2, 11, 0] as const;

/** How long a JetStream API call or publish waits for the server's answer. */
const JETSTREAM_TIMEOUT_MS = 5_000;

function serverAtLeast(version: string | undefined, wanted: readonly [number, number, number]): boolean {
  const parts = (version ?? '0.0.0').split(/[.-]/).slice(0, 3).map(Number);
  for (let i = 0; i < 3; i++) {
    const have = parts[i] ?? 0;
    const need = wanted[i] ?? 0;
    if (have !== need) return have > need;
  }
  return true;
}

/** How long creating a stream or bucket is tried again while JetStream does not answer. */
const SETUP_RETRY_FOR_MS = 60_000;
const SETUP_RETRY_PAUSE_MS = 500;

/**
 * Runs a stream's or bucket's setup, again after each timeout or unavailability for up to
 * SETUP_RETRY_FOR_MS: a clustered JetStream answers nothing while it elects a leader, and a
 * replicated stream takes its replicas' agreement, which on a busy machine outlasts one API
 * timeout. A service starting then would otherwise exit; the setup is idempotent.
 */
async function untilSettled<T>(
  nc: NatsConnection,
  context: { operation: string; subject: string },
  setup: () => Promise<T>,
): Promise<T> {
  const until = Date.now() + SETUP_RETRY_FOR_MS;
  for (;;) {
    try {
      return await setup();
    } catch (error) {
      const failure = fromJetStreamError(error, { ...context, timeoutMs: JETSTREAM_TIMEOUT_MS });
      // Not "no responders" from a server without JetStream: that one does not come right.
      const electing = error instanceof NatsError && error.api_error?.code === 503;
      const transient = failure.code === 'deadline_exceeded' || electing;
      if (!transient || nc.isClosed() || Date.now() >= until) throw failure;
      await new Promise((resolve) => setTimeout(resolve, SETUP_RETRY_PAUSE_MS));
    }
  }
}

// JetStream's error codes for an add that clashes with a stream: "stream name already in use
// with a different configuration", "subjects overlap with an existing stream".
const STREAM_NAME_IN_USE = 10058;
const SUBJECTS_OVERLAP = 10065;

function isCreationClash(error: unknown): boolean {
  const code = error instanceof NatsError ? error.api_error?.err_code : undefined;
  return code === STREAM_NAME_IN_USE || code === SUBJECTS_OVERLAP;
}

/**
 * How long a look after a clash keeps finding no stream before the clash is taken as another
 * stream's: a cluster node that has just rejoined answers looks from a view of the streams a
 * few seconds behind the add that was refused.
 */
const CLASH_SETTLE_MS = 5_000;
const CLASH_LOOK_PAUSE_MS = 250;

function isNotFound(error: unknown): boolean {
  return error instanceof NatsError && error.code === '404';
}

async function orUndefinedWhenMissing<T>(lookup: Promise<T>): Promise<T | undefined> {
  try {
    return await lookup;
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

/**
 * The one place a stream's configuration is decided: subjects, duplicate window, whether it is
 * a work queue, and the policy's replicas, storage and retention limits. A missing stream is
 * created; an existing one is updated to match (JetStream moves replicas itself). Storage and
 * work-queue retention cannot change in place: that is refused with the way out, rather than
 * silently kept.
 */
export async function ensureStream(
  jsm: JetStreamManager,
  name: string,
  config: Partial<StreamConfig>,
  retention: RetentionClass,
  policy: JetStreamPolicy,
  clashSettleMs = CLASH_SETTLE_MS,
): Promise<StreamInfo> {
  const limits = limitsOf(policy, retention);
  const wanted: Partial<StreamConfig> = {
    ...config,
    num_replicas: policy.replicas,
    max_age: nanos(limits.maxAgeMs),
    max_bytes: limits.maxBytes > 0 ? limits.maxBytes : -1,
  };
  const storage = policy.storage === 'memory' ? StorageType.Memory : StorageType.File;
  let existing: StreamInfo | undefined = await orUndefinedWhenMissing(jsm.streams.info(name));
  if (existing === undefined) {
    try {
      return await jsm.streams.add({ ...wanted, name, storage });
    } catch (error) {
      // Another process created it between the look and the add (services and readers start
      // together; a cluster node may answer the look before it has applied the creation): the
      // add is refused as a clash, and the stream is now there to update like any existing one.
      if (!isCreationClash(error)) throw error;
      const until = Date.now() + clashSettleMs;
      existing = await orUndefinedWhenMissing(jsm.streams.info(name));
      while (existing === undefined && Date.now() < until) {
        await new Promise((resolve) => setTimeout(resolve, CLASH_LOOK_PAUSE_MS));
        existing = await orUndefinedWhenMissing(jsm.streams.info(name));
      }
      if (existing === undefined) throw error;
    }
  }
  if (config.retention !== undefined && existing.config.retention !== config.retention) {
    throw new ValidationError(
      `stream ${name} has ${existing.config.retention} retention, not ${config.retention}; ` +
        'JetStream cannot change it: delete the stream (its messages with it) or keep its retention',
    );
  }
  if (existing.config.storage !== storage) {
    throw new ValidationError(
      `stream ${name} is stored in ${existing.config.storage} storage, not ${storage} as JETSTREAM_STORAGE asks; ` +
        'JetStream cannot move it: back it up and delete it, or keep its storage',
    );
  }
  return jsm.streams.update(name, { ...existing.config, ...wanted });
}

/**
 * Creates the stream, or updates it to these subjects, this duplicate window and the policy,
 * and returns the DurableStream over it. Consumers it starts, and the one reading its follows
 * share, join `consumers`, so that the bus's drain stops them; their failures go to the bus's
 * reporter unless a consumer brings its own.
 */
export async function openJetStreamDurableStream(
  nc: NatsConnection,
  watch: ConnectionWatch,
  options: DurableStreamOptions,
  policy: JetStreamPolicy,
  consumers: Set<Pick<DurableConsumer, 'stop'>>,
  busReporter: BusErrorReporter,
): Promise<DurableStream> {
  const name = options.name ?? jetstream.ingestStream;
  const streamSubjects = options.subjects ?? [subjects.ingestAll];
  assertValidName(name, 'stream name');
  streamSubjects.forEach((subject) => assertValidSubject(subject, 'subscribe'));
  const streamConfig = {
    subjects: streamSubjects,
    duplicate_window: nanos(options.duplicateWindowMs ?? DEFAULT_DUPLICATE_WINDOW_MS),
    retention: options.workQueue ? RetentionPolicy.Workqueue : RetentionPolicy.Limits,
  };
  const retention = options.retention ?? 'keep';
  const jsm = await untilSettled(nc, { operation: 'create stream', subject: name }, async () => {
    const manager = await nc.jetstreamManager({ timeout: JETSTREAM_TIMEOUT_MS });
    await ensureStream(manager, name, streamConfig, retention, policy);
    return manager;
  });
  const js = nc.jetstream({ timeout: JETSTREAM_TIMEOUT_MS });
  // Made on the first follow of a stream whose follows share one reading.
  let tail: StreamTail | undefined;
  const sharedTail = (): StreamTail => {
    if (tail === undefined) {
      const created = new StreamTail(
        { nc, watch, stream: name, report: busReporter },
        jsm,
        JETSTREAM_TIMEOUT_MS,
        options.subjectIndex,
      );
      consumers.add(created);
      tail = created;
    }
    return tail;
  };

  return {
    async publish(subject, data, publishOptions) {
      assertValidSubject(subject, 'publish');
      // Told apart here because JetStream answers both alike ("no responders"): a subject the
      // stream does not store is the caller's mistake, which no retry mends; one it stores
      // without an answer has no stream leader right now (below).
      if (!streamSubjects.some((pattern) => subjectMatches(pattern, subject))) throw new NoRespondersError(subject);
      const mark = watch.mark;
      const expected = publishOptions.expectedLastSubjectSeq;
      try {
        const ack = await js.publish(subject, payloadBytes(data), {
          msgID: publishOptions.msgId,
          headers: toMsgHdrs(publishOptions.headers),
          ...(expected === undefined ? {} : { expect: { lastSubjectSequence: expected } }),
        });
        return { duplicate: ack.duplicate, seq: ack.seq };
      } catch (error) {
        // "No responders": no stream leader takes the subject now (one is being elected): unavailable.
        const failure = fromJetStreamError(error, {
          operation: 'stream publish',
          subject,
          timeoutMs: JETSTREAM_TIMEOUT_MS,
        });
        throw watch.unavailableIfDown(failure, mark, `stream publish ${subject}`);
      }
    },

    async lastSequence() {
      try {
        return (await jsm.streams.info(name)).state.last_seq;
      } catch (error) {
        throw fromJetStreamError(error, { operation: 'stream info', subject: name, timeoutMs: JETSTREAM_TIMEOUT_MS });
      }
    },

    async consume(consumerOptions, handler, onError) {
      if (consumerOptions.fromStart) await deleteConsumer(jsm, name, consumerOptions.durable);
      const open = async (): Promise<Consumer> => {
        await ensureConsumer(jsm, name, consumerOptions);
        try {
          return await js.consumers.get(name, consumerOptions.durable);
        } catch (error) {
          throw fromJetStreamError(error, { operation: 'consume', subject: name, timeoutMs: JETSTREAM_TIMEOUT_MS });
        }
      };
      const reopen = async (): Promise<Consumer> => {
        await ensureStream(jsm, name, streamConfig, retention, policy);
        return open();
      };
      const pulling = new PullLoop(await open(), reopen, consumerOptions, handler, {
        stream: name,
        report: onError ?? busReporter,
        termWithReason: serverAtLeast(nc.info?.version, TERM_REASON_SINCE),
      });
      const durableConsumer: DurableConsumer = {
        stop: async () => {
          consumers.delete(durableConsumer);
          await pulling.stop();
        },
        progress: async () => {
          try {
            const info = await jsm.consumers.info(name, consumerOptions.durable);
            return { settledThrough: info.ack_floor.stream_seq, lag: info.num_pending + info.num_ack_pending };
          } catch (error) {
            const what = `${name}/${consumerOptions.durable}`;
            throw fromJetStreamError(error, {
              operation: 'consumer info',
              subject: what,
              timeoutMs: JETSTREAM_TIMEOUT_MS,
            });
          }
        },
      };
      consumers.add(durableConsumer);
      return durableConsumer;
    },

    async last(subject) {
      assertValidSubject(subject, 'publish');
      const mark = watch.mark;
      try {
        const stored = await orUndefinedWhenMissing(jsm.streams.getMessage(name, { last_by_subj: subject }));
        if (stored === undefined) return undefined;
        return { subject: stored.subject, data: stored.data, headers: fromMsgHdrs(stored.header), seq: stored.seq };
      } catch (error) {
        const failure = fromJetStreamError(error, {
          operation: 'stream get',
          subject,
          timeoutMs: JETSTREAM_TIMEOUT_MS,
        });
        throw watch.unavailableIfDown(failure, mark, `stream get ${subject}`);
      }
    },

    follow(subject, followOptions) {
      assertValidSubject(subject, 'publish');
      const { signal, onlyNew, onCaughtUp } = followOptions;
      return options.sharedFollow
        ? sharedTail().follow(subject, signal, { onlyNew, onCaughtUp })
        : readStream(
            { nc, watch, stream: name, report: busReporter },
            { filter: subject, afterSeq: 0, onCaughtUp },
            signal,
          );
    },

    async purge(subject) {
      assertValidSubject(subject, 'publish');
      const mark = watch.mark;
      try {
        await jsm.streams.purge(name, { filter: subject });
      } catch (error) {
        const failure = fromJetStreamError(error, {
          operation: 'stream purge',
          subject,
          timeoutMs: JETSTREAM_TIMEOUT_MS,
        });
        throw watch.unavailableIfDown(failure, mark, `stream purge ${subject}`);
      }
    },
  };
}

/** Deletes the durable consumer when there is one: the next `ensureConsumer` makes it anew, delivering all. */
async function deleteConsumer(jsm: JetStreamManager, stream: string, durable: string): Promise<void> {
  assertValidName(durable, 'durable consumer name');
  try {
    await orUndefinedWhenMissing(jsm.consumers.delete(stream, durable));
  } catch (error) {
    throw fromJetStreamError(error, {
      operation: 'delete consumer',
      subject: `${stream}/${durable}`,
      timeoutMs: JETSTREAM_TIMEOUT_MS,
    });
  }
}

async function ensureConsumer(jsm: JetStreamManager, stream: string, options: DurableConsumerOptions): Promise<void> {
  assertValidName(options.durable, 'durable consumer name');
  assertValidSubject(options.filterSubject, 'subscribe');
  const ackWait = nanos(options.ackWaitMs);
  const inactiveThreshold = options.inactiveThresholdMs === undefined ? 0 : nanos(options.inactiveThresholdMs);
  try {
    const existing: ConsumerInfo | undefined = await orUndefinedWhenMissing(
      jsm.consumers.info(stream, options.durable),
    );
    if (existing === undefined) {
      await jsm.consumers.add(stream, {
        durable_name: options.durable,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        filter_subject: options.filterSubject,
        max_deliver: options.maxDeliver,
        ack_wait: ackWait,
        ...(inactiveThreshold > 0 ? { inactive_threshold: inactiveThreshold } : {}),
      });
      return;
    }
    if (existing.config.filter_subject !== options.filterSubject) {
      throw new ValidationError(
        `durable consumer ${options.durable} of ${stream} filters ${existing.config.filter_subject ?? '(all)'}, not ${options.filterSubject}`,
      );
    }
    if (
      existing.config.max_deliver !== options.maxDeliver ||
      existing.config.ack_wait !== ackWait ||
      (existing.config.inactive_threshold ?? 0) !== inactiveThreshold
    ) {
      await jsm.consumers.update(stream, options.durable, {
        max_deliver: options.maxDeliver,
        ack_wait: ackWait,
        inactive_threshold: inactiveThreshold,
      });
    }
  } catch (error) {
    throw fromJetStreamError(error, {
      operation: 'create consumer',
      subject: `${stream}/${options.durable}`,
      timeoutMs: JETSTREAM_TIMEOUT_MS,
    });
  }
}

/**
 * How often a conditional put reads and tries again after another writer's put came between: the
 * writers of one key are few (a question's attempts), so more means something keeps writing it.
 */
const CONDITIONAL_PUT_TRIES = 5;
const CONDITIONAL_PUT_BACKOFF_MS = 20;
/** Keys whose last conditional put a store remembers: more than a hop-reasoner runs questions at once. */
const REMEMBERED_PUTS = 256;

/**
 * The JetStream KV bucket as a KeyValueStore: created with history 1 when missing (nats.js
 * lays out the stream behind it), then brought to the policy like any stream.
 */
export async function openJetStreamKeyValue(
  nc: NatsConnection,
  options: KeyValueOptions,
  policy: JetStreamPolicy,
  report: BusErrorReporter,
): Promise<BusKeyValueStore> {
  const bucket = options.bucket ?? jetstream.traceBucket;
  assertValidName(bucket, 'bucket name');
  const retention = options.retention ?? 'traces';
  const limits = limitsOf(policy, retention);
  const kv: KV = await untilSettled(nc, { operation: 'open bucket', subject: bucket }, async () => {
    const opened = await nc.jetstream({ timeout: JETSTREAM_TIMEOUT_MS }).views.kv(bucket, {
      history: 1,
      replicas: policy.replicas,
      storage: policy.storage === 'memory' ? StorageType.Memory : StorageType.File,
      ...(limits.maxAgeMs > 0 ? { ttl: limits.maxAgeMs } : {}),
      ...(limits.maxBytes > 0 ? { max_bytes: limits.maxBytes } : {}),
    });
    // A full bucket drops its oldest entries rather than refusing new ones, as nats.js would have it.
    await ensureStream(
      await nc.jetstreamManager({ timeout: JETSTREAM_TIMEOUT_MS }),
      `KV_${bucket}`,
      { discard: DiscardPolicy.Old },
      retention,
      policy,
    );
    return opened;
  });
  const where = (operation: string, key: string) => ({
    operation,
    subject: `${bucket}/${key}`,
    timeoutMs: JETSTREAM_TIMEOUT_MS,
  });
  // The revision and value this store's conditional puts last left each key at, for the few
  // keys written lately: a question's traces are put round by round, by one writer.
  const lastPut = new Map<string, { revision: number; value: Uint8Array }>();
  const remember = (key: string, revision: number, value: Uint8Array) => {
    lastPut.delete(key);
    lastPut.set(key, { revision, value });
    if (lastPut.size > REMEMBERED_PUTS) lastPut.delete(lastPut.keys().next().value as string);
  };
  const get = async (key: string): Promise<Uint8Array | undefined> => {
    assertValidKey(key);
    try {
      const entry = await kv.get(key);
      return entry !== null && entry.operation === 'PUT' ? entry.value : undefined;
    } catch (error) {
      throw fromJetStreamError(error, where('kv get', key));
    }
  };
  return {
    async put(key, value) {
      assertValidKey(key);
      try {
        await kv.put(key, value);
      } catch (error) {
        throw fromJetStreamError(error, where('kv put', key));
      }
    },
    get,
    async putUnless(key, value, keeps) {
      assertValidKey(key);
      // The common case is one put: a key this store put last is expected at the revision it
      // left, and a key it never put is expected absent. The key is read where the server
      // refuses that (another writer's put came between, or a value was there before), and
      // where this store's own last value must stay (another writer may have replaced it since).
      const own = lastPut.get(key);
      let expected: number | undefined = own === undefined ? 0 : keeps(own.value) ? undefined : own.revision;
      for (let refusals = 0; ;) {
        if (expected !== undefined) {
          try {
            remember(key, await kv.put(key, value, { previousSeq: expected }), value);
            return true;
          } catch (error) {
            const failure = fromJetStreamError(error, where('kv put', key));
            lastPut.delete(key);
            refusals += 1;
            if (!(failure instanceof ConflictError) || refusals >= CONDITIONAL_PUT_TRIES) throw failure;
          }
          // Apart from the second refusal on, so that a read answered by a replica behind the
          // leader can catch up.
          if (refusals > 1) await delay(CONDITIONAL_PUT_BACKOFF_MS * refusals * (0.5 + Math.random()));
        }
        let stored: Awaited<ReturnType<KV['get']>>;
        try {
          stored = await kv.get(key);
        } catch (error) {
          throw fromJetStreamError(error, where('kv get', key));
        }
        if (stored !== null && stored.operation === 'PUT' && keeps(stored.value)) return false;
        // 0 where the key has no message: never put, or aged out.
        expected = stored?.revision ?? 0;
      }
    },
    async watch(key, onValue) {
      // A key with no value yet says so now; one with a value gets it from the watch, which
      // starts with each key's last value, so a put in between is not missed.
      if ((await get(key)) === undefined) onValue(undefined);
      let entries: Awaited<ReturnType<KV['watch']>>;
      try {
        entries = await kv.watch({ key });
      } catch (error) {
        throw fromJetStreamError(error, where('kv watch', key));
      }
      // nats.js ends a watch with an error on some failures: reported, never left unhandled (it
      // would end the process); the key then keeps the value it last had.
      void (async () => {
        for await (const entry of entries) onValue(entry.operation === 'PUT' ? entry.value : undefined);
      })().catch((error: unknown) => report(fromJetStreamError(error, where('kv watch', key)), where('kv watch', key)));
      return { stop: () => entries.stop() };
    },
  };
}
