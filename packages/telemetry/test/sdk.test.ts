import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { TraceFlags, context, isSpanContextValid, trace } from '@opentelemetry/api';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { instrument, shutdownTelemetry, startTelemetry, traceExportFromEnv } from '../src/index.js';

interface Received {
  path: string;
  contentType: string;
  body: Buffer;
}

let receiver: Server;
let endpoint: string;
const received: Received[] = [];

beforeAll(async () => {
  receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({
        path: request.url ?? '',
        contentType: request.headers['content-type'] ?? '',
        body: Buffer.concat(chunks),
      });
      response.writeHead(200, { 'content-type': request.headers['content-type'] ?? 'application/json' });
      response.end(request.headers['content-type'] === 'application/json' ? '{}' : '');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => receiver.close(() => resolve())));

const OTEL_KEYS = [
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  'OTEL_EXPORTER_OTLP_PROTOCOL',
  'OTEL_SERVICE_NAME',
  'OTEL_SDK_DISABLED',
  'OTEL_TRACES_EXPORTER',
  'OTEL_TRACES_SAMPLER',
];
afterEach(() => {
  for (const key of OTEL_KEYS) delete process.env[key];
  received.length = 0;
});

async function oneSpan(): Promise<{ traceId: string; valid: boolean; recording: boolean }> {
  return instrument('probe', {}, async (span) => ({
    traceId: span.spanContext().traceId,
    valid: isSpanContextValid(span.spanContext()),
    recording: span.isRecording(),
  }));
}

describe('startTelemetry', () => {
  it('sdk - OTEL_EXPORTER_OTLP_PROTOCOL=http/json exports JSON with the service name on shutdown', async () => {
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = endpoint;
    process.env.OTEL_EXPORTER_OTLP_PROTOCOL = 'http/json';
    const telemetry = startTelemetry({ serviceName: 'reranker', detectResources: false });
    const { traceId } = await oneSpan();
    await telemetry.shutdown();

    expect(received).toHaveLength(1);
    expect(received[0]?.path).toBe('/v1/traces');
    expect(received[0]?.contentType).toBe('application/json');
    const body = JSON.parse(received[0]?.body.toString('utf8') ?? '{}') as {
      resourceSpans: Array<{
        resource: { attributes: Array<{ key: string; value: { stringValue?: string } }> };
        scopeSpans: Array<{ spans: Array<{ name: string; traceId: string }> }>;
      }>;
    };
    const resourceSpans = body.resourceSpans[0];
    expect(resourceSpans?.resource.attributes).toContainEqual({
      key: 'service.name',
      value: { stringValue: 'reranker' },
    });
    expect(resourceSpans?.scopeSpans[0]?.spans[0]).toMatchObject({ name: 'probe', traceId });
  });

  it('sdk - http/protobuf to a traces endpoint, with OTEL_SERVICE_NAME overriding the given name', async () => {
    process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = `${endpoint}/custom/traces`;
    process.env.OTEL_EXPORTER_OTLP_PROTOCOL = 'http/protobuf';
    process.env.OTEL_SERVICE_NAME = 'reranker-canary';
    const telemetry = startTelemetry({ serviceName: 'reranker', detectResources: false });
    expect(telemetry.serviceName).toBe('reranker-canary');
    await oneSpan();
    await telemetry.shutdown();

    expect(received.map((request) => [request.path, request.contentType])).toEqual([
      ['/custom/traces', 'application/x-protobuf'],
    ]);
    expect(received[0]?.body.includes(Buffer.from('reranker-canary'))).toBe(true);
  });

  it('sdk - without an endpoint nothing is sent or recorded, but spans have real ids so logs carry trace ids', async () => {
    const telemetry = startTelemetry({ serviceName: 'hop-reasoner', detectResources: false });
    const { valid, recording } = await oneSpan();
    await telemetry.shutdown();
    expect(valid).toBe(true);
    expect(recording).toBe(false);
    expect(received).toHaveLength(0);
  });

  it('sdk - without an endpoint a span opened under an unsampled one is its parent: no new id, same trace', async () => {
    const telemetry = startTelemetry({ serviceName: 'hop-reasoner', detectResources: false });
    const [outer, inner] = await instrument('outer', {}, async (span) => [
      span.spanContext(),
      await instrument('inner', {}, async (child) => child.spanContext()),
    ]);
    await expect(instrument('failing', {}, () => Promise.reject(new Error('down')))).rejects.toThrow('down');
    await telemetry.shutdown();
    expect(inner).toEqual(outer);
  });

  it('sdk - without an endpoint work under an unsampled span is called as is: its own promise, a throw a rejection', async () => {
    const telemetry = startTelemetry({ serviceName: 'hop-reasoner', detectResources: false });
    const [own, returned] = await instrument('outer', {}, async () => {
      const work = Promise.resolve('done');
      return [work, instrument('inner', {}, () => work)];
    });
    const thrown = instrument('outer', {}, () =>
      instrument('inner', {}, () => {
        throw new Error('thrown');
      }),
    );
    await expect(thrown).rejects.toThrow('thrown');
    await telemetry.shutdown();
    expect(returned).toBe(own);
  });

  it('sdk - without an endpoint a child of a sampled remote span gets its own unsampled span', async () => {
    const telemetry = startTelemetry({ serviceName: 'hop-reasoner', detectResources: false });
    const remote = { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: TraceFlags.SAMPLED, isRemote: true };
    const child = await instrument(
      'consumer',
      { parent: trace.setSpanContext(context.active(), remote) },
      async (span) => span.spanContext(),
    );
    await telemetry.shutdown();
    expect(child.traceId).toBe(remote.traceId);
    expect(child.spanId).not.toBe(remote.spanId);
    expect(child.traceFlags & TraceFlags.SAMPLED).toBe(0);
  });

  it('sdk - without an endpoint an explicit OTEL_TRACES_SAMPLER still decides', async () => {
    process.env.OTEL_TRACES_SAMPLER = 'always_on';
    const telemetry = startTelemetry({ serviceName: 'hop-reasoner', detectResources: false });
    const { recording } = await oneSpan();
    await telemetry.shutdown();
    expect(recording).toBe(true);
  });

  it('sdk - with an endpoint spans are recorded', async () => {
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = endpoint;
    const telemetry = startTelemetry({ serviceName: 'hop-reasoner', detectResources: false });
    const { recording } = await oneSpan();
    await telemetry.shutdown();
    expect(recording).toBe(true);
  });

  it('sdk - OTEL_SDK_DISABLED leaves the no-op API: spans have no ids and nothing is exported', async () => {
    process.env.OTEL_SDK_DISABLED = 'true';
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = endpoint;
    const telemetry = startTelemetry({ serviceName: 'hop-reasoner', detectResources: false });
    const { valid } = await oneSpan();
    await telemetry.shutdown();
    expect(valid).toBe(false);
    expect(received).toHaveLength(0);
  });

  it('sdk - a second start before shutdown throws, and shutdown allows a fresh start', async () => {
    const first = startTelemetry({ serviceName: 'a', detectResources: false });
    expect(() => startTelemetry({ serviceName: 'b', detectResources: false })).toThrow(/already started .* for a/);
    await first.shutdown();
    await first.shutdown();
    const second = startTelemetry({ serviceName: 'b', detectResources: false });
    expect((await oneSpan()).valid).toBe(true);
    await second.shutdown();
  });

  it('sdk - an unknown OTLP protocol fails the start with the accepted values', () => {
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = endpoint;
    process.env.OTEL_EXPORTER_OTLP_PROTOCOL = 'thrift';
    expect(() => startTelemetry({ serviceName: 'x' })).toThrow(
      'OTEL_EXPORTER_OTLP_PROTOCOL must be one of http/json, http/protobuf, grpc, got "thrift"',
    );
  });
});

describe('OTLP over gRPC and the service boot', () => {
  it('sdk - OTEL_EXPORTER_OTLP_PROTOCOL=grpc exports to a gRPC collector', async () => {
    const exports: Buffer[] = [];
    const collector = new grpc.Server();
    // The collector's one method, with the request kept as bytes: an empty reply is a valid
    // ExportTraceServiceResponse.
    collector.addService(
      {
        Export: {
          path: '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
          requestStream: false,
          responseStream: false,
          requestSerialize: (bytes: Buffer) => bytes,
          requestDeserialize: (bytes: Buffer) => bytes,
          responseSerialize: () => Buffer.alloc(0),
          responseDeserialize: (bytes: Buffer) => bytes,
        },
      },
      {
        Export: (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
          exports.push(call.request);
          callback(null, Buffer.alloc(0));
        },
      },
    );
    const port = await new Promise<number>((resolve, reject) =>
      collector.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) =>
        error ? reject(error) : resolve(bound),
      ),
    );
    try {
      process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${port}`;
      process.env.OTEL_EXPORTER_OTLP_PROTOCOL = 'grpc';
      const telemetry = startTelemetry({ serviceName: 'query-understanding', detectResources: false });
      await oneSpan();
      await telemetry.shutdown();
      expect(exports).toHaveLength(1);
      expect(exports[0]?.includes(Buffer.from('query-understanding'))).toBe(true);
      expect(exports[0]?.includes(Buffer.from('probe'))).toBe(true);
    } finally {
      collector.forceShutdown();
    }
  });

  it('sdk - shutdownTelemetry flushes what this process started', async () => {
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = endpoint;
    process.env.OTEL_EXPORTER_OTLP_PROTOCOL = 'http/json';
    startTelemetry({ serviceName: 'answer-gateway', detectResources: false });
    await oneSpan();
    await shutdownTelemetry();
    expect(received).toHaveLength(1);
    await shutdownTelemetry();
  });

  it('sdk - a booted service flushes its spans when its event loop drains', async () => {
    const child = spawn(
      process.execPath,
      [
        '--conditions=@hopline/source',
        '--import',
        'tsx',
        new URL('./fixtures/booted-service.ts', import.meta.url).pathname,
      ],
      {
        env: {
          ...process.env,
          OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
          OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
          OTEL_BSP_SCHEDULE_DELAY: '60000',
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(stderr).toBe('');
    expect(code).toBe(0);
    // The 60 s batch delay means only the beforeExit flush can have sent it.
    const body = received.map((request) => request.body.toString('utf8')).join('\n');
    expect(body).toContain('"stringValue":"booted-service"');
    expect(body).toContain('"name":"boot probe"');
  });
});

describe('traceExportFromEnv', () => {
  it('sdk - chooses export from the standard variables', () => {
    expect(traceExportFromEnv({})).toMatchObject({ kind: 'none' });
    expect(traceExportFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: '  ' })).toMatchObject({ kind: 'none' });
    expect(traceExportFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toEqual({
      kind: 'otlp',
      protocol: 'http/protobuf',
    });
    expect(
      traceExportFromEnv({
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4317',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      }),
    ).toEqual({ kind: 'otlp', protocol: 'grpc' });
    expect(
      traceExportFromEnv({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
      }),
    ).toEqual({ kind: 'otlp', protocol: 'http/json' });
    expect(
      traceExportFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' }),
    ).toMatchObject({ kind: 'none' });
  });
});
