import * as grpc from '@grpc/grpc-js';
import { toHoplineError, UnavailableError } from '@hopline/contracts';
import { abortReason, hopTimeoutMs, MAX_TIMER_MS } from '@hopline/resilience';
import { instrument, type HoplineMetrics } from '@hopline/telemetry';
import { SpanKind, type Attributes } from '@opentelemetry/api';
import { injectMetadata } from './metadata.js';
import { fromGrpcError, grpcStatusFor, grpcStatusName } from './status.js';
import type { ServiceConstructor, UnaryMethodName, UnaryRequest, UnaryResponse } from './types.js';

export const DEFAULT_CLIENT_OPTIONS: grpc.ClientOptions = {
  // Finds a dead connection during a call within ~40 s instead of the OS's minutes.
  'grpc.keepalive_time_ms': 30_000,
  'grpc.keepalive_timeout_ms': 10_000,
  // A restarted dependency is found again within half a second: a breaker's trial call waits
  // for the reconnect (waitForReady), so this and the breaker's reset period bound how long
  // answers stay degraded after it is back. At 1 s the two added up to more than the 2 s the
  // fault suite allows (test/faults, "reranker killed, then started again").
  'grpc.initial_reconnect_backoff_ms': 200,
  'grpc.max_reconnect_backoff_ms': 500,
  // Spread calls over every address the name resolves to (a headless Kubernetes Service lists
  // each pod); with the default pick_first, all calls of one client would go to one pod.
  'grpc.service_config': JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }] }),
  // Nothing serves channelz, and with it on every call counts itself into its channel's,
  // subchannel's and socket's trackers (and timestamps each message).
  'grpc.enable_channelz': 0,
};

export interface CreateClientOptions {
  /** Default: insecure (in-cluster traffic). */
  credentials?: grpc.ChannelCredentials;
  /** Merged over DEFAULT_CLIENT_OPTIONS. */
  channelOptions?: grpc.ClientOptions;
}

export function createClient<C extends grpc.Client>(
  Service: ServiceConstructor<C>,
  address: string,
  options: CreateClientOptions = {},
): C {
  return new Service(address, options.credentials ?? grpc.credentials.createInsecure(), {
    ...DEFAULT_CLIENT_OPTIONS,
    ...options.channelOptions,
  });
}

/** Resolves once the client's channel is connected; rejects with UnavailableError at the deadline. */
export function waitForClientReady(client: grpc.Client, deadlineUnixMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    client.waitForReady(deadlineUnixMs, (error) => {
      if (error)
        reject(
          new UnavailableError(`${client.getChannel().getTarget()} was not ready by the deadline: ${error.message}`, {
            cause: error,
          }),
        );
      else resolve();
    });
  });
}

export interface UnaryCallOptions {
  /** The question's absolute deadline (ms since the Unix epoch); the gRPC deadline derives from it. */
  deadlineUnixMs: number;
  /** This call's own limit: the gRPC deadline is min(now + cap, deadline). */
  capMs?: number;
  /** Aborting it cancels the call; the call rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Extra metadata; the trace context is added to a copy. */
  metadata?: grpc.Metadata;
  /**
   * Queue the call until the channel connects (up to the deadline) instead of failing at once
   * with UNAVAILABLE while the server is down. Default false: a dead dependency should fail
   * fast so that its breaker and fallback act.
   */
  waitForReady?: boolean;
  metrics?: Pick<HoplineMetrics, 'grpcRequests' | 'grpcRequestDuration'>;
}

type UntypedUnaryMethod = (
  argument: unknown,
  metadata: grpc.Metadata,
  options: grpc.CallOptions,
  callback: grpc.requestCallback<unknown>,
) => grpc.ClientUnaryCall;

interface MethodInfo {
  /** `hopline.v1.Reranker/Rerank`: span name and metric label. */
  path: string;
  attributes: Attributes;
}

// Per client constructor and method name (either spelling): looked up once, not on every call.
const methodInfoCache = new WeakMap<object, Map<string, MethodInfo>>();

function methodInfo(client: grpc.Client, method: string): MethodInfo {
  const byName = methodInfoCache.get(client.constructor) ?? new Map<string, MethodInfo>();
  methodInfoCache.set(client.constructor, byName);
  let info = byName.get(method);
  if (!info) {
    const definition = (client.constructor as Partial<ServiceConstructor>).service;
    const found =
      definition &&
      Object.entries(definition).find(([name, entry]) => name === method || entry.originalName === method);
    if (!found) throw new TypeError(`${client.constructor.name} has no method ${method}`);
    const path = found[1].path.replace(/^\//, '');
    const [service, rpcMethod] = path.split('/');
    info = { path, attributes: { 'rpc.system': 'grpc', 'rpc.service': service, 'rpc.method': rpcMethod } };
    byName.set(method, info);
  }
  return info;
}

const isCancellation = (error: unknown): boolean => (error as { code?: unknown }).code === 'cancelled';

/**
 * One unary call as a promise: a gRPC deadline from the question's absolute deadline, trace
 * context in the metadata under a CLIENT span, cancellation by AbortSignal, and every failure
 * a HoplineError (DeadlineExceededError, UnavailableError, CancelledError, or a RemoteError
 * carrying the code the server reported).
 */
export function unaryCall<C extends grpc.Client, K extends UnaryMethodName<C>>(
  client: C,
  method: K,
  request: UnaryRequest<C, K>,
  options: UnaryCallOptions,
): Promise<UnaryResponse<C, K>> {
  const { path, attributes } = methodInfo(client, method);
  const startedAt = options.metrics ? performance.now() : 0;
  // The status the call ended with; unset when it failed before reaching the transport.
  let statusCode: grpc.status | undefined;
  const call = instrument(
    path,
    { kind: SpanKind.CLIENT, attributes, acceptableErrors: isCancellation },
    (span) =>
      new Promise<UnaryResponse<C, K>>((resolve, reject) => {
        const { signal } = options;
        if (signal?.aborted) {
          reject(abortReason(signal));
          return;
        }
        const timeoutMs = hopTimeoutMs(options.deadlineUnixMs, options.capMs ?? Number.POSITIVE_INFINITY);
        const metadata = options.waitForReady ? new grpc.Metadata({ waitForReady: true }) : new grpc.Metadata();
        if (options.metadata) metadata.merge(options.metadata);
        injectMetadata(metadata);
        const callOptions: grpc.CallOptions = timeoutMs <= MAX_TIMER_MS ? { deadline: Date.now() + timeoutMs } : {};

        let cancelOnAbort: (() => void) | undefined;
        const inFlight = (client[method] as unknown as UntypedUnaryMethod).call(
          client,
          request,
          metadata,
          callOptions,
          (error, response) => {
            if (cancelOnAbort) signal?.removeEventListener('abort', cancelOnAbort);
            if (error) {
              statusCode = error.code;
              span.setAttribute('rpc.grpc.status_code', error.code);
              // A cancellation we asked for reports our reason (a guard's timeout, the caller's cancel).
              const cancelledHere = signal?.aborted === true;
              reject(
                cancelledHere && error.code === grpc.status.CANCELLED
                  ? abortReason(signal)
                  : fromGrpcError(error, { cancelledHere }),
              );
            } else {
              statusCode = grpc.status.OK;
              span.setAttribute('rpc.grpc.status_code', grpc.status.OK);
              resolve(response as UnaryResponse<C, K>);
            }
          },
        );
        if (signal) {
          cancelOnAbort = () => inFlight.cancel();
          signal.addEventListener('abort', cancelOnAbort, { once: true });
        }
      }),
  );
  if (!options.metrics) return call;
  const { metrics } = options;
  const record = (code: grpc.status) => {
    const labels = { method: path, role: 'client', code: grpcStatusName(code) };
    metrics.grpcRequests.inc(labels);
    metrics.grpcRequestDuration.observe(labels, (performance.now() - startedAt) / 1000);
  };
  return call.then(
    (response) => (record(grpc.status.OK), response),
    (error: unknown) => {
      record(statusCode ?? grpcStatusFor(toHoplineError(error).code));
      throw error;
    },
  );
}
