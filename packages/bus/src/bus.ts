/**
 * The bus port: everything services need from NATS, so that the same code runs over a real
 * NATS server or, in the embedded mode and in tests, over the in-memory adapter. Payloads are
 * bytes produced by the @hopline/contracts codecs; both adapters carry them and their headers
 * unchanged, and both pass the one scenario suite in `test/scenarios.ts`. A durable stream also
 * takes a ValuePayload, which only the memory adapter hands over without its bytes.
 *
 * Failures are the named errors of @hopline/contracts: DeadlineExceededError (timeout),
 * NoRespondersError (nobody listens), CancelledError (the caller's signal aborted),
 * UnavailableError (the connection is closed or draining), ValidationError (a subject, header,
 * key or payload the server would refuse) and RemoteError (the responder's error envelope).
 */

import type { RetentionClass } from './jetstream-policy.js';

/** Message headers. Names are case-sensitive, as in NATS; values are trimmed, as NATS does. */
export type BusHeaders = Record<string, string>;

export interface BusMessage {
  readonly subject: string;
  /** The payload; may be a plain Uint8Array (as nats.js hands it), which the codecs accept. */
  readonly data: Uint8Array;
  readonly headers: Readonly<BusHeaders>;
}

export interface RequestOptions {
  /** Upper bound on the wait for the reply; the caller derives it from the question's deadline. */
  timeoutMs: number;
  headers?: BusHeaders;
  /** Aborting rejects the request at once with a CancelledError. */
  signal?: AbortSignal;
}

export interface PublishOptions {
  headers?: BusHeaders;
}

export interface SubscribeOptions {
  /** Subscribers sharing a queue group split the messages between them. */
  queue?: string;
}

export interface Subscription {
  /** Stops delivery at once. */
  unsubscribe(): void;
  /** Stops taking new messages and resolves when the handlers of delivered ones returned. */
  drain(): Promise<void>;
}

/** What a request handler returns: the reply payload and optional headers. */
export interface Reply {
  data: Uint8Array;
  headers?: BusHeaders;
}

export interface Endpoint {
  /** Endpoint name reported in $SRV.INFO. */
  name: string;
  subject: string;
  /** Defaults to the service name, so replicas of one service share the load. */
  queue?: string;
  /**
   * Answers one request. A thrown error travels back as an error envelope (code and message
   * headers) and surfaces at the requester as a RemoteError; unknown errors become `internal`.
   */
  handle(request: BusMessage): Promise<Reply>;
}

export interface ServiceDefinition {
  /** Answers $SRV.PING, $SRV.INFO and $SRV.STATS under this name. */
  name: string;
  /** Semantic version, as the NATS services protocol requires. */
  version: string;
  description?: string;
  endpoints: Endpoint[];
}

export interface ServiceHandle {
  readonly name: string;
  /** Instance id, as in $SRV.PING.<name>.<id>. */
  readonly id: string;
  /** Stops taking requests and waits for those in flight. */
  stop(): Promise<void>;
}

/** How long a stream remembers a msgId when the options do not say (JetStream's default). */
export const DEFAULT_DUPLICATE_WINDOW_MS = 120_000;

export interface DurableStreamOptions {
  /** Stream name; defaults to `jetstream.ingestStream`. */
  name?: string;
  /** Subjects the stream stores; defaults to `[subjects.ingestAll]`. */
  subjects?: string[];
  /** How long a msgId is remembered for deduplication; defaults to two minutes. */
  duplicateWindowMs?: number;
  /**
   * Which limits of the bus's JetStream policy the stream keeps; defaults to `keep` (no limits).
   * The memory adapter keeps the same limits.
   */
  retention?: RetentionClass;
  /**
   * A work queue: a message leaves the stream as soon as a consumer acks or terminates it (the
   * retention class's limits still bound what nobody took). Fixed when the stream is created.
   */
  workQueue?: boolean;
  /**
   * Whether a process's follows of this stream share one reading of the whole stream (a
   * consumer per process), rather than each reading its subject through a consumer of its own
   * (made and deleted per follow). For streams with many short follows whose messages the
   * process mostly wants anyway, such as the question events; not for one whose large
   * messages each reader needs a few of. The memory adapter reads in process either way.
   */
  sharedFollow?: boolean;
  /**
   * With `sharedFollow`: the reading also keeps which subjects the stream holds (listed as it
   * starts, then as it reads, each forgotten once the stream's max age has surely removed its
   * messages), so that a follow of a subject the stream never held asks the server for nothing
   * stored before it. For a stream of few subjects that many follows look for and few have
   * (requests to end questions); not for one with a subject per question that most hold.
   */
  subjectIndex?: boolean;
}

export interface KeyValueOptions {
  /** Bucket name; defaults to `jetstream.traceBucket`. */
  bucket?: string;
  /** Which limits of the bus's JetStream policy the bucket keeps; defaults to `traces`. */
  retention?: RetentionClass;
}

/** The state of a bus's connection to its server. */
export interface BusConnection {
  /** False while the connection is down; the NATS client reconnects by itself meanwhile. */
  readonly connected: boolean;
  /** Since when (ms since the Unix epoch) it has been in this state. */
  readonly sinceUnixMs: number;
  /** Why it is down, while it is. */
  readonly reason?: string;
}

export interface Bus {
  /** Adapter name, for logs and health: "nats" or "memory". */
  readonly kind: 'nats' | 'memory';
  /**
   * Whether the server can be reached now. A request that times out while the connection was
   * down rejects with BusUnavailableError rather than DeadlineExceededError: the bus, not the
   * responder, was the problem.
   */
  connection(): BusConnection;
  /**
   * Calls `listener` each time the connection is restored after a loss, until the returned
   * function is called: what core NATS delivered meanwhile (at most once) was lost, and a
   * subscriber that must not miss a message can make up for it. Never called in memory.
   */
  onReconnected(listener: () => void): () => void;
  /**
   * Sends a request and waits for one reply. Rejects with DeadlineExceededError after
   * timeoutMs, NoRespondersError when nobody listens, CancelledError when the signal aborts,
   * and RemoteError when the responder replied with an error envelope.
   */
  request(subject: string, data: Uint8Array, options: RequestOptions): Promise<BusMessage>;
  /** Fire and forget; throws at once on a closed bus or a payload over the server's limit. */
  publish(subject: string, data: Uint8Array, options?: PublishOptions): void;
  /**
   * Delivers every message on `subject` (NATS wildcards `*` and `>` allowed). A handler that
   * throws is reported to the bus's onError; the message is not redelivered. Messages other
   * connections publish reach it once the server knows it: after `flush()`.
   */
  subscribe(
    subject: string,
    options: SubscribeOptions,
    handler: (message: BusMessage) => void | Promise<void>,
  ): Subscription;
  /**
   * Registers a request/reply service with its endpoints and its discovery answers; resolves
   * once the server knows it, so that a request sent afterwards from anywhere reaches it.
   */
  serve(definition: ServiceDefinition): Promise<ServiceHandle>;
  /** Resolves once everything published so far has reached the server. */
  flush(): Promise<void>;
  /**
   * Graceful close: stops subscriptions and services from taking new messages, waits for the
   * handlers in flight (which may still publish and request), then flushes and disconnects.
   */
  drain(): Promise<void>;
  /**
   * The durable stream on this bus's server, created or updated to match the options and the
   * bus's JetStream policy (replicas, storage, the retention class's limits).
   */
  durableStream(options?: DurableStreamOptions): Promise<DurableStream>;
  /** A key-value bucket on this bus's server, created or updated like a durable stream. */
  keyValue(options?: KeyValueOptions): Promise<BusKeyValueStore>;
}

/** Reports failures that have no caller to reject: a subscriber that threw, a reply that could not be sent. */
export type BusErrorReporter = (error: unknown, where: { operation: string; subject: string }) => void;

/**
 * How a durable consumer settles one delivery. `abandon` neither acks nor retries: the consumer
 * forgets the delivery (another delivery of the same message now belongs to someone else), and
 * the stream delivers it again after the ack wait unless that other delivery settles it.
 */
export type Settlement =
  { kind: 'ack' } | { kind: 'retry'; delayMs: number } | { kind: 'terminate'; reason: string } | { kind: 'abandon' };

export interface StreamMessage extends BusMessage {
  /**
   * 1 on first delivery, then counting redeliveries, as the server counts them: on NATS a
   * message a stopping member handed back (retry 0) can reach the next member as 1 again, so 1
   * is a likely first delivery, not a proof of one.
   */
  readonly deliveryCount: number;
}

/** A message as the stream stores it. */
export interface StoredMessage extends BusMessage {
  /** The stream sequence: increasing over the whole stream, not per subject. */
  readonly seq: number;
  /**
   * The payload as decoding `data` would give it, when the message was published as a
   * ValuePayload in this process (the memory adapter): a reader takes it instead of decoding.
   * Every reader gets the same value, so none may change it. Undefined over NATS.
   */
  readonly value?: unknown;
}

/**
 * A durable message given as the message it encodes rather than as bytes, for a stream whose
 * writers and readers may share a process (a question's events in the embedded mode): the NATS
 * adapter stores `encode()`, the memory adapter stores `decoded().value` and hands it to its
 * readers as it is (`StoredMessage.value`), counting `decoded().byteLength` towards the
 * stream's byte limit as it counts bytes. Each adapter calls only the one it needs, so neither
 * mode pays for the other's form.
 */
export interface ValuePayload {
  encode(): Uint8Array;
  decoded(): { value: unknown; byteLength: number };
}

/** The bytes of a durable message's payload, as the wire carries them. */
export const payloadBytes = (payload: Uint8Array | ValuePayload): Uint8Array =>
  payload instanceof Uint8Array ? payload : payload.encode();

export interface DurablePublishOptions {
  headers?: BusHeaders;
  /** Deduplication id (Nats-Msg-Id): a second publish with the same id within the window is dropped. */
  msgId: string;
  /**
   * Stores the message only if the last message on its subject has this stream sequence (0: the
   * subject has none); otherwise rejects with ConflictError. Checked after deduplication, so a
   * retried publish with the same msgId reports a duplicate, not a conflict.
   */
  expectedLastSubjectSeq?: number;
}

export interface DurableConsumerOptions {
  /** Durable consumer name; consumers with the same name share the work. */
  durable: string;
  /** Subjects this consumer takes from the stream. */
  filterSubject: string;
  /**
   * Deliveries after which the stream stops redelivering a message that was not acked. A
   * handler that sees `deliveryCount === maxDeliver` should dead-letter and terminate it.
   */
  maxDeliver: number;
  /**
   * How long one delivery may stay unsettled before it is redelivered: what brings back the
   * messages of a consumer that died, and, without `keepAlive`, the bound on a handler's work.
   */
  ackWaitMs: number;
  /**
   * The server deletes the consumer after it had no client for this long (JetStream
   * `inactive_threshold`), so that the consumer of a worker that is gone for good does not
   * hold its backlog forever. Unset, it is kept. The memory adapter keeps it regardless.
   */
  inactiveThresholdMs?: number;
  /** Deliveries this consumer handles at once; it asks the stream for more only while it has room. Default 1. */
  maxInFlight?: number;
  /**
   * Marks a delivery in progress every third of the ack wait while its handler runs, so the ack
   * wait bounds how long the deliveries of a consumer that died (or lost its connection) wait
   * for another, not how long a handler may work.
   */
  keepAlive?: boolean;
  /**
   * Deletes the durable consumer first, when there is one, its position and unsettled
   * deliveries with it, so that this consume reads the stream from its first message: for a
   * reader whose own record of what it read was lost (an index whose files were removed), which
   * the position kept for it would skip. Done once, as the consume starts, not when it reopens
   * the consumer later; only for a consumer no other reader shares, whose deliveries it would
   * take away.
   */
  fromStart?: boolean;
}

/** How far a durable consumer has got through its stream. */
export interface ConsumerProgress {
  /** Every message of the stream up to this sequence has been settled (acked or terminated). */
  settledThrough: number;
  /** Messages of the stream not settled yet: not delivered, or delivered and awaiting settlement. */
  lag: number;
}

export interface DurableConsumer {
  /** Stops taking deliveries and waits for the handlers in flight. */
  stop(): Promise<void>;
  /** Asks the server (or broker) where the consumer stands now. */
  progress(): Promise<ConsumerProgress>;
}

export interface FollowOptions {
  /** Ends the iteration (without an error) when it aborts. */
  signal: AbortSignal;
  /**
   * Only what is stored after the follow is first read (its first `next()`, which joins the
   * reading at once) is wanted: the follow need not look for messages stored before, a request
   * to the server per follow. For a subject its caller knows to be empty (a question id it just
   * made).
   * A stream whose follows share one reading honours it while that reading runs; otherwise the
   * follow still starts with the messages stored before.
   */
  onlyNew?: boolean;
  /**
   * Called once, when the follow has yielded every message its subject held as it joined the
   * reading (at once when it held none, or with `onlyNew`): what it yields after is new. Not
   * called when the follow ends before that (its signal aborts, the reading fails).
   */
  onCaughtUp?: () => void;
}

/**
 * A durable stream (JetStream in production): ingestion, question jobs and question events. A
 * publish resolves once the stream stored the message, and a message is redelivered until a
 * consumer settles it. A handler that throws leaves its delivery unsettled (it comes back after
 * ackWaitMs) and the error goes to `onError`, or to the bus's reporter.
 */
export interface DurableStream {
  /** Rejects with NoRespondersError when the subject is not one of the stream's subjects. */
  publish(
    subject: string,
    data: Uint8Array | ValuePayload,
    options: DurablePublishOptions,
  ): Promise<{ duplicate: boolean; seq: number }>;
  consume(
    options: DurableConsumerOptions,
    handler: (message: StreamMessage) => Promise<Settlement>,
    onError?: BusErrorReporter,
  ): Promise<DurableConsumer>;
  /** The sequence of the newest message stored; 0 when there is none. */
  lastSequence(): Promise<number>;
  /** The last message stored on a literal subject, or undefined when it has none. */
  last(subject: string): Promise<StoredMessage | undefined>;
  /**
   * Every message stored on a literal subject, oldest first, then each new one as it is
   * stored, in order and without gaps, until the signal aborts. Survives a reconnect: the
   * reading resumes after the last message it yielded.
   */
  follow(subject: string, options: FollowOptions): AsyncIterable<StoredMessage>;
  /** Removes every message stored on a literal subject (a job taken back before anyone ran it). */
  purge(subject: string): Promise<void>;
}

/**
 * A small key-value store (JetStream KV in production) for reasoning traces. Keys follow the
 * JetStream KV rules (letters, digits, `-_/=.`, not starting or ending with `.`) in every
 * adapter, so that a key accepted by one is accepted by all.
 */
export interface KeyValueStore {
  put(key: string, value: Uint8Array): Promise<void>;
  get(key: string): Promise<Uint8Array | undefined>;
  /**
   * Puts the value unless the one stored must stay (`keeps` says so of it), as a compare-and-set:
   * where another writer puts the key between the read and the write, the write is refused and
   * the new value read and judged again. Resolves true when the value was written. For writers in
   * different processes that must not overwrite each other's newer values (a hop-reasoner paused
   * past its lease and another that took its question over).
   */
  putUnless(key: string, value: Uint8Array, keeps: (stored: Uint8Array) => boolean): Promise<boolean>;
}

/** A key's watch, until stopped. */
export interface KeyWatch {
  stop(): void;
}

/** A bucket on the bus's server: besides reads and writes, a key's changes are pushed to whoever watches it. */
export interface BusKeyValueStore extends KeyValueStore {
  /**
   * Calls `onValue` with the key's current value (undefined while it has none), then with each
   * value put after it, in order, until the watch is stopped. Resolves once the watch is set up.
   */
  watch(key: string, onValue: (value: Uint8Array | undefined) => void): Promise<KeyWatch>;
}
