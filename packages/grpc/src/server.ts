import * as grpc from '@grpc/grpc-js';
import {
  CancelledError,
  DeadlineExceededError,
  toHoplineError,
  UnavailableError,
  type HoplineError,
} from '@hopline/contracts';
import { abortReason } from '@hopline/resilience';
import { instrument, type HoplineMetrics, type Logger } from '@hopline/telemetry';
import { propagation, SpanKind, type Attributes, type Span } from '@opentelemetry/api';
import { HealthService } from './health.js';
import { extractMetadata } from './metadata.js';
import { grpcStatusName, toGrpcStatus } from './status.js';
import type {
  CallContext,
  HandlersOf,
  ServerStreamHandler,
  ServiceConstructor,
  StreamWriter,
  UnaryHandler,
} from './types.js';

export interface GrpcServerOptions {
  logger?: Pick<Logger, 'error' | 'warn' | 'info'>;
  metrics?: Pick<HoplineMetrics, 'grpcRequests' | 'grpcRequestDuration'>;
  /** Merged over the defaults (keepalive). */
  channelOptions?: grpc.ChannelOptions;
  /** TLS (`mutualTlsFrom(...).server()`); default plaintext, as in development. */
  credentials?: grpc.ServerCredentials;
  /**
   * Serves clients outside the fabric (the gateway's API): their `traceparent` is followed, but
   * their W3C baggage is dropped, since it would travel on with every call and message made
   * for them and could name the question (`hopline.question_id`) their spans are searched by.
   */
  edge?: boolean;
  /**
   * How long a streaming call's write may wait for the client to take what was sent; then the
   * write rejects UNAVAILABLE and the handler ends, so a client that stopped reading does not
   * hold what the handler holds for good. The status reaches the client after what was already
   * sent, should it read again. Default: no bound (fabric callers read what they ask for).
   */
  streamStallMs?: number;
}

export interface ShutdownOptions {
  /**
   * How long to keep answering after health turns NOT_SERVING, so that load balancers and
   * probes stop routing here before the listener closes. Default 0.
   */
  drainMs?: number;
  /** How long in-flight calls may take to finish before they are cancelled. Default 5 000. */
  graceMs?: number;
}

export interface GrpcServer {
  /** Serves a generated service; its health status is SERVING until `setServing` or shutdown says otherwise. */
  addService<S extends ServiceConstructor>(service: S, implementation: HandlersOf<S>): void;
  /** A service's health status (its full name, e.g. `hopline.v1.Reranker`; '' is the whole server). */
  setServing(serviceName: string, serving: boolean): void;
  /** The whole server's and every service's health status at once, as a readiness check decides; none after shutdown began. */
  setAllServing(serving: boolean): void;
  /** Binds and starts; returns the bound port (useful with port 0). */
  listen(host: string, port: number): Promise<number>;
  /** NOT_SERVING first, then a graceful close, then a forced one after `graceMs`. Safe to call more than once. */
  shutdown(options?: ShutdownOptions): Promise<void>;
}

export const DEFAULT_SERVER_OPTIONS: grpc.ChannelOptions = {
  'grpc.keepalive_time_ms': 60_000,
  'grpc.keepalive_timeout_ms': 20_000,
  // Clients reconnect, and so resolve the server's name again, at least every five minutes:
  // pods that an autoscaler added get calls without waiting for a connection to break. Calls
  // in flight get as long again to finish.
  'grpc.max_connection_age_ms': 300_000,
  'grpc.max_connection_age_grace_ms': 300_000,
  // channelz stays on here although nothing serves it (the clients turn it off): with it off,
  // grpc-js's forceShutdown no longer cancelled the calls still running after the grace period,
  // and their handlers' signals never aborted (health-shutdown.test.ts).
};

const WHOLE_SERVER = '';

/** Statuses that say the server failed, not the request (OpenTelemetry's rule for gRPC server spans). */
const SERVER_FAULT_STATUSES: ReadonlySet<grpc.status> = new Set([
  grpc.status.UNKNOWN,
  grpc.status.DEADLINE_EXCEEDED,
  grpc.status.UNIMPLEMENTED,
  grpc.status.INTERNAL,
  grpc.status.UNAVAILABLE,
  grpc.status.DATA_LOSS,
]);

type AnyCall = grpc.ServerUnaryCall<unknown, unknown> | grpc.ServerWritableStream<unknown, unknown>;

/**
 * What a handler sees of its call. The AbortController and the peer string are made only if the
 * handler asks for them: most handlers never do, and every call pays for what is built here.
 */
class HandlerCallContext implements CallContext {
  readonly deadlineUnixMs: number;
  readonly metadata: grpc.Metadata;
  private controller: AbortController | undefined;
  private onCancelled: (() => void) | undefined;
  private finished = false;

  constructor(protected readonly call: AnyCall) {
    const deadline = call.getDeadline();
    this.deadlineUnixMs = deadline instanceof Date ? deadline.getTime() : deadline;
    this.metadata = call.metadata;
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      const controller = new AbortController();
      this.controller = controller;
      // Once the handler is done, the call's later fate is not its signal's business.
      if (this.finished) return controller.signal;
      if (this.call.cancelled) controller.abort(this.whyEnded());
      else {
        this.onCancelled = () => controller.abort(this.whyEnded());
        this.call.once('cancelled', this.onCancelled);
      }
    }
    return this.controller.signal;
  }

  get peer(): string {
    return this.call.getPeer();
  }

  /** Detaches from the call once the handler is done. */
  dispose(): void {
    this.finished = true;
    if (this.onCancelled) this.call.off('cancelled', this.onCancelled);
  }

  private whyEnded(): HoplineError {
    return Date.now() >= this.deadlineUnixMs
      ? new DeadlineExceededError("the caller's deadline passed")
      : new CancelledError('the client cancelled the call');
  }
}

class StreamCallContext<Response> extends HandlerCallContext implements StreamWriter<Response> {
  constructor(
    private readonly stream: grpc.ServerWritableStream<unknown, Response>,
    private readonly stallMs: number,
  ) {
    super(stream);
  }

  write(message: Response): Promise<void> {
    const { signal, stream, stallMs } = this;
    return new Promise<void>((resolve, reject) => {
      if (signal.aborted) {
        reject(abortReason(signal));
        return;
      }
      if (stream.write(message)) {
        resolve();
        return;
      }
      const settle = () => {
        clearTimeout(stalled);
        stream.off('drain', onDrain);
        signal.removeEventListener('abort', onAbort);
      };
      const onDrain = () => {
        settle();
        resolve();
      };
      const onAbort = () => {
        settle();
        reject(abortReason(signal));
      };
      const stalled =
        stallMs === Infinity
          ? undefined
          : setTimeout(() => {
              settle();
              reject(
                new UnavailableError(
                  `the client took nothing of the stream for ${stallMs} ms; it may resume after the last event it read`,
                ),
              );
            }, stallMs);
      stream.once('drain', onDrain);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}

function serviceNameOf(definition: grpc.ServiceDefinition): string {
  const path = Object.values(definition)[0]?.path;
  const name = path?.split('/')[1];
  if (!name) throw new Error('the service definition has no methods');
  return name;
}

const isRequestFault = (error: unknown): boolean => !SERVER_FAULT_STATUSES.has(toGrpcStatus(error).code);

/**
 * A gRPC server whose handlers are async functions of (request, call context): each call runs
 * in a SERVER span continuing the client's trace, with an AbortSignal for cancellation, and a
 * thrown HoplineError becomes the matching gRPC status with the Hopline code in the
 * `hopline-error-code` trailer. Serves the standard health protocol (grpc.health.v1.Health).
 */
export function createGrpcServer(options: GrpcServerOptions = {}): GrpcServer {
  const { logger, metrics } = options;
  const server = new grpc.Server({ ...DEFAULT_SERVER_OPTIONS, ...options.channelOptions });
  const health = new HealthService();
  health.setStatus(WHOLE_SERVER, 'SERVING');
  const callerContext = options.edge
    ? (metadata: grpc.Metadata) => propagation.deleteBaggage(extractMetadata(metadata))
    : (metadata: grpc.Metadata) => extractMetadata(metadata);
  health.addToServer(server);
  let stopping: Promise<void> | undefined;

  const record = (method: string, code: grpc.status, startedAt: number) => {
    if (!metrics) return;
    const labels = { method, role: 'server', code: grpcStatusName(code) };
    metrics.grpcRequests.inc(labels);
    metrics.grpcRequestDuration.observe(labels, (performance.now() - startedAt) / 1000);
  };

  // `thrown` is what the handler threw: for a bug, its own stack is the one worth reading.
  const report = (method: string, failure: HoplineError, thrown: unknown) => {
    if (failure.code === 'internal') logger?.error('gRPC handler failed', { method, error: thrown });
    else if (failure.code === 'unavailable' || failure.code === 'deadline_exceeded')
      logger?.warn('gRPC handler could not answer', { method, error: failure });
  };

  /** Runs one call's handler in a SERVER span that continues the client's trace. */
  const serve = <T>(method: string, attributes: Attributes, call: AnyCall, run: () => Promise<T>): Promise<T> =>
    instrument(
      method,
      { kind: SpanKind.SERVER, parent: callerContext(call.metadata), attributes, acceptableErrors: isRequestFault },
      async (span: Span) => {
        try {
          const result = await run();
          span.setAttribute('rpc.grpc.status_code', grpc.status.OK);
          return result;
        } catch (error) {
          span.setAttribute('rpc.grpc.status_code', toGrpcStatus(error).code);
          throw error;
        }
      },
    );

  /** The status a failed handler ends its call with, reported and counted. */
  const failed = (method: string, error: unknown, startedAt: number) => {
    const failure = toHoplineError(error);
    report(method, failure, error);
    const status = toGrpcStatus(failure);
    record(method, status.code, startedAt);
    return status;
  };

  const spanAttributes = (method: string): Attributes => {
    const [service, rpcMethod] = method.split('/');
    return { 'rpc.system': 'grpc', 'rpc.service': service, 'rpc.method': rpcMethod };
  };

  const unary = (method: string, handler: UnaryHandler<unknown, unknown>): grpc.handleUnaryCall<unknown, unknown> => {
    const attributes = spanAttributes(method);
    return (call, callback) => {
      const startedAt = metrics ? performance.now() : 0;
      const context = new HandlerCallContext(call);
      serve(method, attributes, call, () => handler(call.request, context)).then(
        (response) => {
          context.dispose();
          record(method, grpc.status.OK, startedAt);
          callback(null, response);
        },
        (error: unknown) => {
          context.dispose();
          callback(failed(method, error, startedAt));
        },
      );
    };
  };

  const serverStream = (
    method: string,
    handler: ServerStreamHandler<unknown, unknown>,
  ): grpc.handleServerStreamingCall<unknown, unknown> => {
    const attributes = spanAttributes(method);
    return (call) => {
      const startedAt = metrics ? performance.now() : 0;
      const context = new StreamCallContext(call, options.streamStallMs ?? Infinity);
      serve(method, attributes, call, () => handler(call.request, context)).then(
        () => {
          context.dispose();
          record(method, grpc.status.OK, startedAt);
          call.end();
        },
        (error: unknown) => {
          context.dispose();
          // The stream's own error listener turns this into the call's final status.
          call.emit('error', failed(method, error, startedAt));
        },
      );
    };
  };

  return {
    addService(service, implementation) {
      const definition = service.service;
      const handlers: grpc.UntypedServiceImplementation = {};
      for (const [name, method] of Object.entries(definition)) {
        const handler = (implementation as Record<string, unknown>)[name];
        if (typeof handler !== 'function') throw new Error(`no handler for ${method.path}`);
        if (method.requestStream) throw new Error(`${method.path} streams requests, which Hopline does not serve`);
        const path = method.path.replace(/^\//, '');
        handlers[name] = method.responseStream
          ? serverStream(path, handler as ServerStreamHandler<unknown, unknown>)
          : unary(path, handler as UnaryHandler<unknown, unknown>);
      }
      server.addService(definition, handlers);
      health.setStatus(serviceNameOf(definition), 'SERVING');
    },

    setServing(serviceName, serving) {
      health.setStatus(serviceName, serving ? 'SERVING' : 'NOT_SERVING');
    },

    setAllServing(serving) {
      if (stopping) return;
      for (const name of health.services()) health.setStatus(name, serving ? 'SERVING' : 'NOT_SERVING');
    },

    listen(host, port) {
      const address = host.includes(':') && !host.startsWith('[') ? `[${host}]:${port}` : `${host}:${port}`;
      return new Promise<number>((resolve, reject) => {
        server.bindAsync(address, options.credentials ?? grpc.ServerCredentials.createInsecure(), (error, boundPort) =>
          error ? reject(error) : resolve(boundPort),
        );
      });
    },

    shutdown({ drainMs = 0, graceMs = 5_000 } = {}) {
      stopping ??= (async () => {
        for (const name of health.services()) health.setStatus(name, 'NOT_SERVING');
        if (drainMs > 0) await new Promise((resolve) => setTimeout(resolve, drainMs));
        // Watchers have seen NOT_SERVING; their open streams must not hold the graceful close.
        health.endWatches();
        await new Promise<void>((resolve) => {
          const force = setTimeout(() => {
            logger?.warn('gRPC calls still running after the grace period; cancelling them', { graceMs });
            server.forceShutdown();
            resolve();
          }, graceMs);
          server.tryShutdown(() => {
            clearTimeout(force);
            resolve();
          });
        });
      })();
      return stopping;
    },
  };
}
