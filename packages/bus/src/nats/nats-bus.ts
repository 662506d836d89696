import { inboxPrefix, UnavailableError } from '@hopline/contracts';
import { connect, type Msg, type NatsConnection, type Service, type Subscription as NatsSubscription } from 'nats';
import type { Logger } from '@hopline/telemetry';
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
  RequestOptions,
  ServiceDefinition,
  ServiceHandle,
  SubscribeOptions,
  Subscription,
} from '../bus.js';
import { raiseIfErrorEnvelope } from '../envelope.js';
import { reportToStderr } from '../report.js';
import { InFlight } from '../in-flight.js';
import { DEFAULT_JETSTREAM_POLICY, type JetStreamPolicy } from '../jetstream-policy.js';
import { assertValidServiceDefinition } from '../names.js';
import { fromNatsError } from '../nats-errors.js';
import { assertRequestCanStart, raceAbort } from '../request-guard.js';
import { answerRequest } from '../responder.js';
import { assertValidSubject } from '../subjects.js';
import { withTracing, type BusMetrics } from '../tracing.js';
import { fromMsgHdrs, toMsgHdrs } from '../wire-headers.js';
import { ConnectionWatch } from './connection-watch.js';
import { openJetStreamDurableStream, openJetStreamKeyValue } from './jetstream.js';
import type { NatsSecurity } from './security.js';

export interface NatsBusOptions {
  /** One server or a comma-separated list, e.g. `nats://127.0.0.1:4222`. */
  url: string;
  /** Connection name shown by the server: the service that owns this connection. */
  name: string;
  /** Where failures without a caller go (a subscriber that threw); defaults to stderr. */
  onError?: BusErrorReporter;
  /** Replicas, storage and retention of the streams and buckets it creates; defaults to one replica on file. */
  jetstream?: JetStreamPolicy;
  /** Where the connection's losses, restorations and server errors are logged. */
  logger?: Pick<Logger, 'info' | 'warn'>;
  /** Where requests sent and served are counted and timed. */
  metrics?: BusMetrics;
  /** Credentials and TLS (`natsSecurityFrom`); none: anonymous and plaintext, as in development. */
  security?: NatsSecurity;
}

/**
 * Connects to NATS and returns the traced bus over it. Rejects with UnavailableError when no
 * server answers; once connected, the client reconnects for as long as the process lives.
 */
export async function connectNatsBus(options: NatsBusOptions): Promise<Bus> {
  let connection: NatsConnection;
  try {
    connection = await connect({
      servers: options.url.split(',').map((server) => server.trim()),
      name: options.name,
      // Replies come back under an inbox of this service's own, the only one its user may read.
      inboxPrefix: inboxPrefix(options.name),
      ...options.security,
      maxReconnectAttempts: -1,
      // Async traces capture a stack per request (~15 µs measured in bench/bus.ts) to append to
      // NatsErrors, which the bus replaces with errors naming the operation and subject.
      noAsyncTraces: true,
    });
  } catch (error) {
    throw new UnavailableError(`cannot connect to NATS at ${options.url}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  return withTracing(
    new NatsBus(
      connection,
      new ConnectionWatch(connection, options.logger),
      options.onError ?? reportToStderr,
      options.jetstream ?? DEFAULT_JETSTREAM_POLICY,
    ),
    { metrics: options.metrics, service: options.name },
  );
}

function toBusMessage(msg: Msg): BusMessage {
  return { subject: msg.subject, data: msg.data, headers: fromMsgHdrs(msg.headers) };
}

class NatsBus implements Bus {
  readonly kind = 'nats' as const;
  private readonly subscriptions = new Set<Subscription>();
  private readonly services = new Set<ServiceHandle>();
  private readonly consumers = new Set<Pick<DurableConsumer, 'stop'>>();
  private draining: Promise<void> | undefined;

  constructor(
    private readonly nc: NatsConnection,
    private readonly watch: ConnectionWatch,
    private readonly onError: BusErrorReporter,
    private readonly policy: JetStreamPolicy,
  ) {}

  connection(): BusConnection {
    return this.watch.connection;
  }

  onReconnected(listener: () => void): () => void {
    return this.watch.onRestored(listener);
  }

  async request(subject: string, data: Uint8Array, options: RequestOptions): Promise<BusMessage> {
    assertValidSubject(subject, 'publish');
    assertRequestCanStart(subject, options);
    const timeoutMs = Math.ceil(options.timeoutMs);
    const mark = this.watch.mark;
    const reply = this.nc.request(subject, data, { timeout: timeoutMs, headers: toMsgHdrs(options.headers) }).then(
      (msg) => raiseIfErrorEnvelope(toBusMessage(msg)),
      (error: unknown) => {
        const failure = fromNatsError(error, { operation: 'request', subject, timeoutMs });
        throw this.watch.unavailableIfDown(failure, mark, `request ${subject}`);
      },
    );
    // nats.js cannot cancel a request: an abort answers the caller now, and a late reply is dropped.
    return raceAbort(reply, subject, options.signal);
  }

  publish(subject: string, data: Uint8Array, options: PublishOptions = {}): void {
    assertValidSubject(subject, 'publish');
    const headers = toMsgHdrs(options.headers);
    try {
      this.nc.publish(subject, data, { headers });
    } catch (error) {
      throw fromNatsError(error, { operation: 'publish', subject });
    }
  }

  subscribe(
    subject: string,
    options: SubscribeOptions,
    handler: (message: BusMessage) => void | Promise<void>,
  ): Subscription {
    assertValidSubject(subject, 'subscribe');
    const inFlight = new InFlight();
    let natsSubscription: NatsSubscription;
    try {
      natsSubscription = this.nc.subscribe(subject, {
        queue: options.queue,
        callback: (error, msg) => {
          if (error) {
            this.onError(fromNatsError(error, { operation: 'subscribe', subject }), {
              operation: 'subscribe',
              subject,
            });
            return;
          }
          const message = toBusMessage(msg);
          inFlight
            .track((async () => handler(message))())
            .catch((handlerError: unknown) =>
              this.onError(handlerError, { operation: 'handle', subject: message.subject }),
            );
        },
      });
    } catch (error) {
      throw fromNatsError(error, { operation: 'subscribe', subject });
    }
    const subscription: Subscription = {
      unsubscribe: () => {
        this.subscriptions.delete(subscription);
        natsSubscription.unsubscribe();
      },
      drain: async () => {
        this.subscriptions.delete(subscription);
        if (!this.nc.isClosed() && !natsSubscription.isClosed() && !natsSubscription.isDraining()) {
          await natsSubscription.drain().catch((error: unknown) => {
            throw fromNatsError(error, { operation: 'drain', subject });
          });
        }
        await inFlight.settled();
      },
    };
    this.subscriptions.add(subscription);
    return subscription;
  }

  async serve(definition: ServiceDefinition): Promise<ServiceHandle> {
    assertValidServiceDefinition(definition);
    definition.endpoints.forEach((endpoint) => assertValidSubject(endpoint.subject, 'subscribe'));
    let service: Service;
    try {
      service = await this.nc.services.add({
        name: definition.name,
        version: definition.version,
        description: definition.description ?? '',
        queue: definition.name,
      });
    } catch (error) {
      throw fromNatsError(error, { operation: 'serve', subject: definition.name });
    }
    const inFlight = new InFlight();
    for (const endpoint of definition.endpoints) {
      service.addEndpoint(endpoint.name, {
        subject: endpoint.subject,
        queue: endpoint.queue ?? definition.name,
        handler: (_error, msg) => {
          // The services framework closes the service itself on a subscription error.
          const report = (error: unknown) => this.onError(error, { operation: 'reply', subject: msg.subject });
          const send = (reply: { data: Uint8Array; headers?: Record<string, string> }) => {
            try {
              msg.respond(reply.data, { headers: toMsgHdrs(reply.headers) });
            } catch (error) {
              throw fromNatsError(error, { operation: 'reply', subject: msg.subject });
            }
          };
          void inFlight.track(answerRequest(endpoint, toBusMessage(msg), send, report));
        },
      });
    }
    const handle: ServiceHandle = {
      name: definition.name,
      id: service.info().id,
      stop: async () => {
        this.services.delete(handle);
        await service.stop();
        await inFlight.settled();
      },
    };
    this.services.add(handle);
    await this.flush();
    return handle;
  }

  async flush(): Promise<void> {
    try {
      await this.nc.flush();
    } catch (error) {
      throw fromNatsError(error, { operation: 'flush' });
    }
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
    if (this.nc.isClosed()) return;
    try {
      await this.nc.drain();
    } catch (error) {
      throw fromNatsError(error, { operation: 'drain' });
    }
  }

  durableStream(options: DurableStreamOptions = {}): Promise<DurableStream> {
    return openJetStreamDurableStream(this.nc, this.watch, options, this.policy, this.consumers, this.onError);
  }

  keyValue(options: KeyValueOptions = {}): Promise<BusKeyValueStore> {
    return openJetStreamKeyValue(this.nc, options, this.policy, this.onError);
  }
}
