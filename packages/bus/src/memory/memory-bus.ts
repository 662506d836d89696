import { DeadlineExceededError, NoRespondersError, UnavailableError } from '@hopline/contracts';
import { createInbox, nuid } from 'nats';
import type {
  Bus,
  BusConnection,
  BusErrorReporter,
  BusMessage,
  DurableConsumer,
  DurableStream,
  DurableStreamOptions,
  KeyValueOptions,
  BusKeyValueStore,
  PublishOptions,
  Reply,
  RequestOptions,
  ServiceDefinition,
  ServiceHandle,
  SubscribeOptions,
  Subscription,
} from '../bus.js';
import { raiseIfErrorEnvelope } from '../envelope.js';
import { DEFAULT_JETSTREAM_POLICY, type JetStreamPolicy } from '../jetstream-policy.js';
import { InFlight } from '../in-flight.js';
import { assertValidServiceDefinition } from '../names.js';
import { reportToStderr } from '../report.js';
import { assertRequestCanStart, raceAbort } from '../request-guard.js';
import { answerRequest } from '../responder.js';
import { assertValidSubject } from '../subjects.js';
import { withTracing, type BusMetrics } from '../tracing.js';
import { decodeHeaders, encodeHeaders } from '../wire-headers.js';
import { Broker, DEFAULT_MAX_PAYLOAD, Route, type WireMessage } from './broker.js';
import {
  DISCOVERY_VERBS,
  discoveryAnswer,
  discoverySubjects,
  EndpointStats,
  type ServiceIdentity,
} from './discovery.js';
import { MemoryKeyValueStore } from './memory-kv.js';
import { openMemoryDurableStream, type MemoryStream } from './memory-stream.js';

export interface MemoryBrokerOptions {
  /** Largest message (payload plus encoded headers) the broker accepts; defaults to NATS's 1 MiB. */
  maxPayload?: number;
  /** The retention limits its durable streams keep (replicas and storage mean nothing here). */
  jetstream?: JetStreamPolicy;
}

export interface MemoryBusOptions {
  /** Where failures without a caller go (a subscriber that threw); defaults to stderr. */
  onError?: BusErrorReporter;
  /** Where requests sent and served are counted and timed. */
  metrics?: BusMetrics;
  /** The service that owns this connection: the messages it receives are handled as that service's work. */
  service?: string;
}

/**
 * An in-process NATS server for the embedded mode and tests: every bus connected to one
 * broker sees the others' messages, services, durable streams and key-value buckets.
 */
export interface MemoryBroker {
  connect(options?: MemoryBusOptions): Bus;
}

export function createMemoryBroker(options: MemoryBrokerOptions = {}): MemoryBroker {
  const server = new MemoryServer(
    new Broker(options.maxPayload ?? DEFAULT_MAX_PAYLOAD),
    options.jetstream ?? DEFAULT_JETSTREAM_POLICY,
  );
  return {
    connect: (busOptions = {}) => withTracing(new MemoryBus(server, busOptions.onError ?? reportToStderr), busOptions),
  };
}

/** A traced bus on a broker of its own. */
export function createMemoryBus(options: MemoryBusOptions & MemoryBrokerOptions = {}): Bus {
  return createMemoryBroker(options).connect(options);
}

/** What the buses of one broker share, as the clients of one NATS server share the server. */
class MemoryServer {
  readonly streams = new Map<string, MemoryStream>();
  readonly buckets = new Map<string, MemoryKeyValueStore>();
  constructor(
    readonly broker: Broker,
    readonly policy: JetStreamPolicy,
  ) {}
}

function toBusMessage(message: WireMessage): BusMessage {
  return { subject: message.subject, data: message.data, headers: decodeHeaders(message.headers) };
}

class MemoryBus implements Bus {
  readonly kind = 'memory' as const;
  private readonly subscriptions = new Set<Subscription>();
  private readonly services = new Set<ServiceHandle>();
  private readonly consumers = new Set<DurableConsumer>();
  private draining: Promise<void> | undefined;
  private closed = false;
  private readonly openedAt = Date.now();
  private closedAt = 0;

  constructor(
    private readonly server: MemoryServer,
    private readonly onError: BusErrorReporter,
  ) {}

  connection(): BusConnection {
    return this.closed
      ? { connected: false, sinceUnixMs: this.closedAt, reason: 'closed' }
      : { connected: true, sinceUnixMs: this.openedAt };
  }

  // An in-process bus never loses its connection: nothing to make up for.
  onReconnected(): () => void {
    return () => undefined;
  }

  private get broker(): Broker {
    return this.server.broker;
  }

  private assertOpen(operation: string): void {
    if (this.closed) throw new UnavailableError(`${operation}: the bus connection is closed`);
  }

  async request(subject: string, data: Uint8Array, options: RequestOptions): Promise<BusMessage> {
    this.assertOpen(`request ${subject}`);
    assertValidSubject(subject, 'publish');
    assertRequestCanStart(subject, options);
    let release = () => {};
    const reply = new Promise<BusMessage>((resolve, reject) => {
      const inbox = new Route(createInbox(), undefined, (message) => {
        release();
        resolve(toBusMessage(message));
      });
      const removeInbox = this.broker.add(inbox);
      const timer = setTimeout(() => {
        release();
        reject(new DeadlineExceededError(`request ${subject}: no answer within ${options.timeoutMs} ms`));
      }, options.timeoutMs);
      release = () => {
        clearTimeout(timer);
        inbox.close();
        removeInbox();
      };
      let receivers: number;
      try {
        receivers = this.broker.publish({
          subject,
          reply: inbox.pattern,
          data,
          headers: encodeHeaders(options.headers),
        });
      } catch (error) {
        release();
        reject(error);
        return;
      }
      if (receivers === 0) {
        release();
        reject(new NoRespondersError(subject));
      }
    });
    return raceAbort(
      reply.then((message) => raiseIfErrorEnvelope(message)),
      subject,
      options.signal,
      () => release(),
    );
  }

  publish(subject: string, data: Uint8Array, options: PublishOptions = {}): void {
    this.assertOpen(`publish ${subject}`);
    assertValidSubject(subject, 'publish');
    this.broker.publish({ subject, data, headers: encodeHeaders(options.headers) });
  }

  subscribe(
    subject: string,
    options: SubscribeOptions,
    handler: (message: BusMessage) => void | Promise<void>,
  ): Subscription {
    this.assertOpen(`subscribe ${subject}`);
    assertValidSubject(subject, 'subscribe');
    const inFlight = new InFlight();
    const route = new Route(subject, options.queue, (wire) => {
      const message = toBusMessage(wire);
      inFlight
        .track((async () => handler(message))())
        .catch((error: unknown) => this.onError(error, { operation: 'handle', subject: message.subject }));
    });
    const remove = this.broker.add(route);
    const subscription: Subscription = {
      unsubscribe: () => {
        this.subscriptions.delete(subscription);
        route.close();
        remove();
      },
      drain: async () => {
        this.subscriptions.delete(subscription);
        await route.drain();
        remove();
        await inFlight.settled();
      },
    };
    this.subscriptions.add(subscription);
    return subscription;
  }

  async serve(definition: ServiceDefinition): Promise<ServiceHandle> {
    this.assertOpen(`serve ${definition.name}`);
    assertValidServiceDefinition(definition);
    definition.endpoints.forEach((endpoint) => assertValidSubject(endpoint.subject, 'subscribe'));
    const inFlight = new InFlight();
    const identity: ServiceIdentity = {
      definition,
      id: nuid.next(),
      started: new Date().toISOString(),
      endpoints: definition.endpoints.map(
        (endpoint) => new EndpointStats(endpoint.name, endpoint.subject, endpoint.queue ?? definition.name),
      ),
    };

    const respondTo = (request: WireMessage) => (reply: Reply) => {
      if (request.reply !== undefined)
        this.broker.publish({ subject: request.reply, data: reply.data, headers: encodeHeaders(reply.headers) });
    };
    const endpointRoutes = definition.endpoints.map((endpoint, index) => {
      const stats = identity.endpoints[index];
      return new Route(endpoint.subject, endpoint.queue ?? definition.name, (wire) => {
        const startedAt = process.hrtime.bigint();
        const report = (error: unknown) => this.onError(error, { operation: 'reply', subject: wire.subject });
        const answered = answerRequest(endpoint, toBusMessage(wire), respondTo(wire), report).then((failure) =>
          stats?.record(startedAt, failure?.message),
        );
        void inFlight.track(answered);
      });
    });
    const discoveryRoutes = DISCOVERY_VERBS.flatMap((verb) =>
      discoverySubjects(verb, definition.name, identity.id).map(
        (subject) =>
          new Route(subject, undefined, (wire) =>
            respondTo(wire)({ data: new TextEncoder().encode(JSON.stringify(discoveryAnswer(verb, identity))) }),
          ),
      ),
    );
    const removals = [...endpointRoutes, ...discoveryRoutes].map((route) => this.broker.add(route));

    const handle: ServiceHandle = {
      name: definition.name,
      id: identity.id,
      stop: async () => {
        this.services.delete(handle);
        discoveryRoutes.forEach((route) => route.close());
        await Promise.all(endpointRoutes.map((route) => route.drain()));
        removals.forEach((remove) => remove());
        await inFlight.settled();
      },
    };
    this.services.add(handle);
    return handle;
  }

  async flush(): Promise<void> {
    this.assertOpen('flush');
    // Everything published so far is already queued at its receivers; one tick lets a round trip pass.
    await new Promise<void>((resolve) => setImmediate(resolve));
  }

  drain(): Promise<void> {
    this.draining ??= this.drainOnce();
    return this.draining;
  }

  private async drainOnce(): Promise<void> {
    await Promise.all([
      ...[...this.subscriptions].map((subscription) => subscription.drain()),
      ...[...this.services].map((service) => service.stop()),
      ...[...this.consumers].map((consumer) => consumer.stop()),
    ]);
    this.closed = true;
    this.closedAt = Date.now();
  }

  async durableStream(options: DurableStreamOptions = {}): Promise<DurableStream> {
    this.assertOpen('durable stream');
    return openMemoryDurableStream(this.server.streams, this.server.policy, options, this.consumers, this.onError);
  }

  async keyValue(options: KeyValueOptions = {}): Promise<BusKeyValueStore> {
    this.assertOpen('key-value bucket');
    return MemoryKeyValueStore.open(this.server.buckets, options);
  }
}
