import * as grpc from '@grpc/grpc-js';
import {
  CancelledError,
  DeadlineExceededError,
  ERROR_CODES,
  HoplineError,
  RemoteError,
  UnavailableError,
  ValidationError,
  type RerankRequest__Output,
  type RerankResponse,
} from '@hopline/contracts';
import { createGuard } from '@hopline/resilience';
import { createMetrics, instrument } from '@hopline/telemetry';
import { startTestTelemetry } from '@hopline/telemetry/testing';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createClient, ERROR_CODE_METADATA_KEY, grpcStatusFor, unaryCall, type CallContext } from '../src/index.js';
import { hopline, startServer } from './fixtures.js';

const telemetry = startTestTelemetry('grpc-test');
afterAll(() => telemetry.shutdown());

type RerankBehaviour = (request: RerankRequest__Output, call: CallContext) => Promise<RerankResponse>;
let behaviour: RerankBehaviour;
const seenCalls: CallContext[] = [];
const serverMetrics = createMetrics('reranker', { defaultMetrics: false });

let fixture: Awaited<ReturnType<typeof startServer>>;
let client: InstanceType<typeof hopline.Reranker>;

beforeAll(async () => {
  fixture = await startServer(
    (server) =>
      server.addService(hopline.Reranker, {
        Rerank: async (request, call) => {
          seenCalls.push(call);
          return behaviour(request, call);
        },
      }),
    { metrics: serverMetrics },
  );
  client = createClient(hopline.Reranker, fixture.address);
});
afterAll(async () => {
  client.close();
  await fixture.dispose();
});
beforeEach(() => {
  seenCalls.length = 0;
  telemetry.exporter.reset();
  behaviour = async (request) => ({ chunks: request.chunks.slice(0, request.topN), scorer: `echo:${request.query}` });
});

const chunk = (id: string) => ({ chunkId: id, docId: `doc-${id}`, text: `text of ${id}` });
const request = { query: 'who coached the winners', chunks: [chunk('a'), chunk('b'), chunk('c')], topN: 2 };
const inFiveSeconds = () => ({ deadlineUnixMs: Date.now() + 5_000 });

/** A handler that answers only when its call is aborted, the way a well-behaved one gives up. */
const waitForAbort: RerankBehaviour = (_request, call) =>
  new Promise((_resolve, reject) =>
    call.signal.addEventListener('abort', () => reject(call.signal.reason), { once: true }),
  );

describe('gRPC unary', () => {
  it('grpc - a unary call round-trips the request and response', async () => {
    const response = await unaryCall(client, 'Rerank', request, inFiveSeconds());
    expect(response.scorer).toBe('echo:who coached the winners');
    expect(response.chunks.map((c) => c.chunkId)).toEqual(['a', 'b']);
    expect(response.chunks[0]?.docId).toBe('doc-a');
  });

  it('grpc - the lower-case method name works too', async () => {
    await expect(unaryCall(client, 'rerank', request, inFiveSeconds())).resolves.toMatchObject({
      scorer: 'echo:who coached the winners',
    });
  });

  it("grpc - the handler sees the client's deadline and metadata", async () => {
    const deadlineUnixMs = Date.now() + 4_000;
    const metadata = new grpc.Metadata();
    metadata.set('x-tenant', 'acme');
    await unaryCall(client, 'Rerank', request, { deadlineUnixMs, metadata });
    const [call] = seenCalls;
    expect(call?.deadlineUnixMs).toBeGreaterThan(deadlineUnixMs - 1_000);
    expect(call?.deadlineUnixMs).toBeLessThanOrEqual(deadlineUnixMs + 100);
    expect(call?.metadata.get('x-tenant')).toEqual(['acme']);
    expect(call?.signal.aborted).toBe(false);
  });

  it("grpc - a call past its cap rejects with DeadlineExceededError and aborts the handler's signal", async () => {
    behaviour = waitForAbort;
    const error = await unaryCall(client, 'Rerank', request, { deadlineUnixMs: Date.now() + 60_000, capMs: 50 }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(DeadlineExceededError);
    await vi.waitFor(() => expect(seenCalls[0]?.signal.aborted).toBe(true));
    expect(seenCalls[0]?.signal.reason).toBeInstanceOf(DeadlineExceededError);
  });

  it('grpc - a deadline already passed fails without reaching the server', async () => {
    await expect(unaryCall(client, 'Rerank', request, { deadlineUnixMs: Date.now() - 1 })).rejects.toBeInstanceOf(
      DeadlineExceededError,
    );
    expect(seenCalls).toHaveLength(0);
  });

  it("grpc - aborting the caller's signal cancels the call and the handler's signal", async () => {
    behaviour = waitForAbort;
    const caller = new AbortController();
    const call = unaryCall(client, 'Rerank', request, { ...inFiveSeconds(), signal: caller.signal });
    await vi.waitFor(() => expect(seenCalls).toHaveLength(1));
    caller.abort();
    await expect(call).rejects.toBeInstanceOf(CancelledError);
    await vi.waitFor(() => expect(seenCalls[0]?.signal.aborted).toBe(true));
    expect(seenCalls[0]?.signal.reason).toBeInstanceOf(CancelledError);
  });

  it("grpc - a caller's abort reason that is a HoplineError is what the call rejects with", async () => {
    behaviour = waitForAbort;
    const caller = new AbortController();
    const call = unaryCall(client, 'Rerank', request, { ...inFiveSeconds(), signal: caller.signal });
    await vi.waitFor(() => expect(seenCalls).toHaveLength(1));
    const reason = new DeadlineExceededError('the guard gave up');
    caller.abort(reason);
    await expect(call).rejects.toBe(reason);
  });

  it('grpc - an already aborted signal never sends the call', async () => {
    const caller = new AbortController();
    caller.abort();
    await expect(
      unaryCall(client, 'Rerank', request, { ...inFiveSeconds(), signal: caller.signal }),
    ).rejects.toBeInstanceOf(CancelledError);
    expect(seenCalls).toHaveLength(0);
  });
});

describe('gRPC error mapping', () => {
  const rawCall = () =>
    new Promise<grpc.ServiceError>((resolve, reject) => {
      client.Rerank(request, new grpc.Metadata(), { deadline: Date.now() + 5_000 }, (error) =>
        error ? resolve(error) : reject(new Error('expected a failure')),
      );
    });

  it.each(ERROR_CODES.filter((code) => code !== 'cancelled'))(
    "grpc - a handler's %s error reaches the client as its status, trailer and code",
    async (code) => {
      behaviour = async () => {
        throw new HoplineError(code, `failed with ${code}`);
      };
      const raw = await rawCall();
      expect(raw.code).toBe(grpcStatusFor(code));
      expect(raw.details).toBe(`failed with ${code}`);
      expect(raw.metadata.get(ERROR_CODE_METADATA_KEY)).toEqual([code]);

      const error = await unaryCall(client, 'Rerank', request, inFiveSeconds()).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RemoteError);
      expect(error).toMatchObject({ code, remote: true, message: `failed with ${code}` });
    },
  );

  it('grpc - a handler error outside the taxonomy is INTERNAL, logged with its stack', async () => {
    const lines: string[] = [];
    const logged = await startServer(
      (server) =>
        server.addService(hopline.Reranker, {
          Rerank: async () => {
            throw new TypeError('cannot read properties of undefined');
          },
        }),
      {
        logger: {
          error: (msg, fields) =>
            lines.push(`${msg} ${JSON.stringify(fields, (_k, v: unknown) => (v instanceof Error ? v.stack : v))}`),
          warn: () => undefined,
          info: () => undefined,
        },
      },
    );
    const otherClient = createClient(hopline.Reranker, logged.address);
    try {
      const error = await unaryCall(otherClient, 'Rerank', request, inFiveSeconds()).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'internal', remote: true, message: 'cannot read properties of undefined' });
      expect(lines.join('\n')).toContain('gRPC handler failed');
      expect(lines.join('\n')).toContain('TypeError: cannot read properties of undefined');
    } finally {
      otherClient.close();
      await logged.dispose();
    }
  });

  it("grpc - relayed errors do not look like the callee's own infrastructure failure", async () => {
    behaviour = async () => {
      throw new ValidationError('topN must be positive');
    };
    const error = await unaryCall(client, 'Rerank', request, inFiveSeconds()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RemoteError);
    expect((error as RemoteError).code).toBe('invalid_argument');
  });

  it('grpc - an unreachable server fails fast with UnavailableError', async () => {
    const nowhere = createClient(hopline.Reranker, '127.0.0.1:1');
    try {
      const started = Date.now();
      await expect(
        unaryCall(nowhere, 'Rerank', request, { deadlineUnixMs: Date.now() + 10_000 }),
      ).rejects.toBeInstanceOf(UnavailableError);
      expect(Date.now() - started).toBeLessThan(9_000);
    } finally {
      nowhere.close();
    }
  });

  it('grpc - waitForReady waits for an unreachable server until the deadline instead', async () => {
    const nowhere = createClient(hopline.Reranker, '127.0.0.1:1');
    try {
      await expect(
        unaryCall(nowhere, 'Rerank', request, { deadlineUnixMs: Date.now() + 300, waitForReady: true }),
      ).rejects.toBeInstanceOf(DeadlineExceededError);
    } finally {
      nowhere.close();
    }
  });
});

describe('gRPC under a guard', () => {
  const breaker = {
    errorThresholdPercentage: 50,
    volumeThreshold: 2,
    resetTimeoutMs: 60_000,
    rollingCountTimeoutMs: 10_000,
  };

  it("guard - the guard's timeout cancels the gRPC call and the handler's signal, as DeadlineExceededError", async () => {
    behaviour = waitForAbort;
    const guard = createGuard({ downstream: 'reranker', breaker });
    try {
      const error = await guard
        .call((signal) => unaryCall(client, 'Rerank', request, { deadlineUnixMs: Date.now() + 60_000, signal }), {
          deadlineUnixMs: Date.now() + 60_000,
          capMs: 50,
        })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DeadlineExceededError);
      await vi.waitFor(() => expect(seenCalls[0]?.signal.aborted).toBe(true));
      expect(guard.stats()).toMatchObject({ timeouts: 1, failures: 1 });
    } finally {
      guard.shutdown();
    }
  });

  it("guard - an unreachable server opens the breaker; a handler's validation errors never do", async () => {
    const nowhere = createClient(hopline.Reranker, '127.0.0.1:1');
    const down = createGuard({ downstream: 'reranker-down', breaker });
    const picky = createGuard({ downstream: 'reranker-picky', breaker });
    behaviour = async () => {
      throw new ValidationError('query is empty');
    };
    try {
      for (let i = 0; i < 3; i += 1) {
        await down
          .call((signal) => unaryCall(nowhere, 'Rerank', request, { ...inFiveSeconds(), signal }), inFiveSeconds())
          .catch(() => undefined);
        await picky
          .call((signal) => unaryCall(client, 'Rerank', request, { ...inFiveSeconds(), signal }), inFiveSeconds())
          .catch(() => undefined);
      }
      expect(down.state).toBe('open');
      expect(down.stats()).toMatchObject({ failures: 2, rejected: 1 });
      expect(picky.state).toBe('closed');
      expect(picky.stats()).toMatchObject({ ignoredErrors: 3, failures: 0 });
    } finally {
      nowhere.close();
      down.shutdown();
      picky.shutdown();
    }
  });
});

describe('gRPC tracing and metrics', () => {
  it('grpc - the server span continues the client span: one trace, parent → child, handler work nested', async () => {
    behaviour = async (req) => instrument('rerank.score', {}, async () => ({ chunks: req.chunks, scorer: 'traced' }));
    await instrument('hop 1', {}, () => unaryCall(client, 'Rerank', request, inFiveSeconds()));

    const [hop] = telemetry.spansNamed('hop 1');
    const clientSpan = telemetry.spansNamed('hopline.v1.Reranker/Rerank').find((span) => span.kind === SpanKind.CLIENT);
    const serverSpan = telemetry.spansNamed('hopline.v1.Reranker/Rerank').find((span) => span.kind === SpanKind.SERVER);
    const [score] = telemetry.spansNamed('rerank.score');
    const traceId = hop?.spanContext().traceId;
    expect(traceId).toBeDefined();
    for (const span of [clientSpan, serverSpan, score]) expect(span?.spanContext().traceId).toBe(traceId);
    expect(clientSpan?.parentSpanContext?.spanId).toBe(hop?.spanContext().spanId);
    expect(serverSpan?.parentSpanContext?.spanId).toBe(clientSpan?.spanContext().spanId);
    expect(score?.parentSpanContext?.spanId).toBe(serverSpan?.spanContext().spanId);
    expect(serverSpan?.attributes).toMatchObject({
      'rpc.system': 'grpc',
      'rpc.service': 'hopline.v1.Reranker',
      'rpc.method': 'Rerank',
      'rpc.grpc.status_code': 0,
    });
    expect(clientSpan?.attributes).toMatchObject({ 'rpc.system': 'grpc', 'rpc.grpc.status_code': 0 });
  });

  it('grpc - a server fault marks both spans as errors; a bad request leaves the server span unset', async () => {
    behaviour = async () => {
      throw new UnavailableError('index not loaded');
    };
    await unaryCall(client, 'Rerank', request, inFiveSeconds()).catch(() => undefined);
    behaviour = async () => {
      throw new ValidationError('query is empty');
    };
    await unaryCall(client, 'Rerank', request, inFiveSeconds()).catch(() => undefined);

    const spans = telemetry.spansNamed('hopline.v1.Reranker/Rerank');
    const server = spans.filter((span) => span.kind === SpanKind.SERVER);
    const clientSpans = spans.filter((span) => span.kind === SpanKind.CLIENT);
    expect(server.map((span) => [span.attributes['rpc.grpc.status_code'], span.status.code])).toEqual([
      [grpc.status.UNAVAILABLE, SpanStatusCode.ERROR],
      [grpc.status.INVALID_ARGUMENT, SpanStatusCode.UNSET],
    ]);
    expect(clientSpans.map((span) => span.status.code)).toEqual([SpanStatusCode.ERROR, SpanStatusCode.ERROR]);
  });

  it('grpc - the channel keeps no channelz bookkeeping, which every call would pay for', async () => {
    await unaryCall(client, 'Rerank', request, inFiveSeconds());
    const channelz = grpc.getChannelzHandlers() as unknown as Record<
      'GetChannel',
      (
        call: { request: object },
        callback: (error: grpc.ServiceError | null, response?: { server?: unknown[] }) => void,
      ) => void
    >;
    const ask = (method: 'GetChannel', body: object) =>
      new Promise<{ error: grpc.ServiceError | null; response?: { server?: unknown[] } }>((resolve) =>
        channelz[method]({ request: body }, (error, response) => resolve({ error, response })),
      );
    const channel = await ask('GetChannel', { channel_id: String(client.getChannel().getChannelzRef().id) });
    expect(channel.error?.code).toBe(grpc.status.NOT_FOUND);
  });

  it('grpc - client and server calls are counted by method and status', async () => {
    const clientMetrics = createMetrics('hop-reasoner', { defaultMetrics: false });
    await unaryCall(client, 'Rerank', request, { ...inFiveSeconds(), metrics: clientMetrics });
    behaviour = async () => {
      throw new ValidationError('query is empty');
    };
    await unaryCall(client, 'Rerank', request, { ...inFiveSeconds(), metrics: clientMetrics }).catch(() => undefined);
    await unaryCall(client, 'Rerank', request, { deadlineUnixMs: Date.now() - 1, metrics: clientMetrics }).catch(
      () => undefined,
    );

    const clientText = await clientMetrics.registry.metrics();
    expect(clientText).toContain(
      'hopline_grpc_requests_total{method="hopline.v1.Reranker/Rerank",role="client",code="OK",service="hop-reasoner"} 1',
    );
    expect(clientText).toContain(
      'hopline_grpc_requests_total{method="hopline.v1.Reranker/Rerank",role="client",code="INVALID_ARGUMENT",service="hop-reasoner"} 1',
    );
    expect(clientText).toContain(
      'hopline_grpc_requests_total{method="hopline.v1.Reranker/Rerank",role="client",code="DEADLINE_EXCEEDED",service="hop-reasoner"} 1',
    );
    const serverText = await serverMetrics.registry.metrics();
    expect(serverText).toMatch(
      /hopline_grpc_requests_total\{method="hopline.v1.Reranker\/Rerank",role="server",code="INVALID_ARGUMENT",service="reranker"\} [1-9]/,
    );
    expect(serverText).toMatch(
      /hopline_grpc_request_duration_seconds_count\{service="reranker",method="hopline.v1.Reranker\/Rerank",role="server",code="OK"\} [1-9]/,
    );
  });
});
