/**
 * The bus port: everything services need from NATS, so that the same code runs over a real
 * NATS server or, in the embedded mode and in tests, over the in-memory adapter. Payloads are
 * bytes produced by the @hopline/contracts codecs; both adapters carry them and their headers
 * unchanged.
 */

/** Message headers. Names are case-sensitive, as in NATS. */
export type BusHeaders = Record<string, string>;

export interface BusMessage {
  readonly subject: string;
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
  version: string;
  description?: string;
  endpoints: Endpoint[];
}

export interface ServiceHandle {
  readonly name: string;
  readonly id: string;
  /** Stops taking requests and waits for those in flight. */
  stop(): Promise<void>;
}

export interface Bus {
  /** Adapter name, for logs and health: "nats" or "memory". */
  readonly kind: 'nats' | 'memory';
  /**
   * Sends a request and waits for one reply. Rejects with DeadlineExceededError after
   * timeoutMs, NoRespondersError when nobody listens, CancelledError when the signal aborts,
   * and RemoteError when the responder replied with an error envelope.
   */
  request(subject: string, data: Uint8Array, options: RequestOptions): Promise<BusMessage>;
  publish(subject: string, data: Uint8Array, options?: PublishOptions): void;
  subscribe(subject: string, options: SubscribeOptions, handler: (message: BusMessage) => void | Promise<void>): Subscription;
  /** Registers a request/reply service with its endpoints and its discovery answers. */
  serve(definition: ServiceDefinition): Promise<ServiceHandle>;
  /** Resolves once everything published so far has reached the server. */
  flush(): Promise<void>;
  /** Graceful close: drains subscriptions, flushes, disconnects. */
  drain(): Promise<void>;
}

/** How a durable consumer settles one delivery. */
export type Settlement = { kind: 'ack' } | { kind: 'retry'; delayMs: number } | { kind: 'terminate'; reason: string };

export interface StreamMessage extends BusMessage {
  /** 1 on first delivery, then counting redeliveries. */
  readonly deliveryCount: number;
}

export interface DurablePublishOptions {
  headers?: BusHeaders;
  /** Deduplication id (Nats-Msg-Id): a second publish with the same id is dropped. */
  msgId: string;
}

export interface DurableConsumerOptions {
  /** Durable consumer name; consumers with the same name share the work. */
  durable: string;
  /** Subjects this consumer takes from the stream. */
  filterSubject: string;
  /** Deliveries after which a message that keeps failing is terminated. */
  maxDeliver: number;
  /** How long a delivery may stay unsettled before it is redelivered. */
  ackWaitMs: number;
}

export interface DurableConsumer {
  stop(): Promise<void>;
}

/**
 * The durable stream behind ingestion (JetStream in production): a publish resolves once the
 * stream stored the message, and a message is redelivered until a consumer settles it.
 */
export interface DurableStream {
  publish(subject: string, data: Uint8Array, options: DurablePublishOptions): Promise<{ duplicate: boolean; seq: number }>;
  consume(options: DurableConsumerOptions, handler: (message: StreamMessage) => Promise<Settlement>): Promise<DurableConsumer>;
}

/** A small key-value store (JetStream KV in production) for reasoning traces. */
export interface KeyValueStore {
  put(key: string, value: Uint8Array): Promise<void>;
  get(key: string): Promise<Uint8Array | undefined>;
}
