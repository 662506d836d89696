import { context, diag, propagation, trace, type ProxyTracerProvider } from '@opentelemetry/api';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as OtlpGrpcTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as OtlpJsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtobufTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import {
  defaultResource,
  detectResources,
  envDetector,
  hostDetector,
  processDetector,
  resourceFromAttributes,
} from '@opentelemetry/resources';
import { NodeSDK } from '@opentelemetry/sdk-node';
import {
  AlwaysOffSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  type Sampler,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { QuestionIdSpanProcessor } from './propagation.js';
import { setSpansRecorded } from './recording.js';
import { ServiceRoutingTracerProvider } from './service-scope.js';

export interface TelemetryOptions {
  /** The service's `service.name`; `OTEL_SERVICE_NAME` overrides it. */
  serviceName: string;
  /**
   * Replaces the export chosen from the environment. Tests pass a SimpleSpanProcessor over an
   * InMemorySpanExporter; services leave it unset.
   */
  spanProcessors?: SpanProcessor[];
  /**
   * Host, process and OTEL_RESOURCE_ATTRIBUTES detection. Default true. Host detection
   * resolves asynchronously and holds back the first exports until it does, so tests that
   * read spans as they end turn it off.
   */
  detectResources?: boolean;
  /**
   * Services that share this process (the embedded mode), each given its own tracer provider
   * and resource: a span whose context is a service's (`runInService`, `inService`) carries
   * that service's `service.name`; the rest carry `serviceName`.
   */
  services?: readonly string[];
}

export interface Telemetry {
  readonly serviceName: string;
  /** Flushes pending spans and unregisters the SDK. Safe to call more than once. */
  shutdown(): Promise<void>;
}

export const OTLP_PROTOCOLS = ['http/json', 'http/protobuf', 'grpc'] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

/** What the environment asks for: an OTLP exporter over one protocol, or no export at all. */
export type TraceExport = { kind: 'none'; reason: string } | { kind: 'otlp'; protocol: OtlpProtocol };

/** Longest a shutdown waits for the exporter: a dead collector must not keep a stopping service alive. */
const SHUTDOWN_TIMEOUT_MS = 5_000;

const nonEmpty = (value: string | undefined): string | undefined => (value?.trim() ? value.trim() : undefined);

/**
 * Reads the standard OTEL_* variables. Without an endpoint nothing is exported: the embedded
 * mode runs with no collector, and the OTLP default (localhost:4318) would only log refused
 * connections; spans then have real ids but are not recorded (see `tracingFromEnv`).
 */
export function traceExportFromEnv(env: NodeJS.ProcessEnv = process.env): TraceExport {
  const exporters = (nonEmpty(env.OTEL_TRACES_EXPORTER) ?? 'otlp').split(',').map((name) => name.trim());
  if (!exporters.includes('otlp')) {
    return { kind: 'none', reason: `OTEL_TRACES_EXPORTER=${env.OTEL_TRACES_EXPORTER ?? ''} names no otlp exporter` };
  }
  if (!nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) && !nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT)) {
    return { kind: 'none', reason: 'no OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set' };
  }
  const protocol =
    nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL) ?? nonEmpty(env.OTEL_EXPORTER_OTLP_PROTOCOL) ?? 'http/protobuf';
  if (!(OTLP_PROTOCOLS as readonly string[]).includes(protocol)) {
    throw new Error(`OTEL_EXPORTER_OTLP_PROTOCOL must be one of ${OTLP_PROTOCOLS.join(', ')}, got "${protocol}"`);
  }
  return { kind: 'otlp', protocol: protocol as OtlpProtocol };
}

// The exporters read their endpoint, headers, timeout and compression from the same variables.
function otlpExporter(protocol: OtlpProtocol): SpanExporter {
  switch (protocol) {
    case 'http/json':
      return new OtlpJsonTraceExporter();
    case 'http/protobuf':
      return new OtlpProtobufTraceExporter();
    case 'grpc':
      return new OtlpGrpcTraceExporter();
  }
}

/**
 * How spans are kept as the environment asks: exported over OTLP, or, with no export, not
 * recorded at all. A span nobody exports still has real ids (logs carry its trace id and
 * headers its traceparent), but it skips the attributes, events and processors a recorded span
 * costs on every call and message: a measurable share of a question's CPU. Its context
 * travels unsampled, so a service that exports does not record the spans of a question begun
 * by one that does not. An explicit OTEL_TRACES_SAMPLER still decides.
 */
function tracingFromEnv(env: NodeJS.ProcessEnv): { spanProcessors: SpanProcessor[]; sampler?: Sampler } {
  const plan = traceExportFromEnv(env);
  // BatchSpanProcessor reads OTEL_BSP_SCHEDULE_DELAY and the other OTEL_BSP_* limits itself.
  if (plan.kind === 'otlp') return { spanProcessors: [new BatchSpanProcessor(otlpExporter(plan.protocol))] };
  return { spanProcessors: [], ...(nonEmpty(env.OTEL_TRACES_SAMPLER) ? {} : { sampler: new AlwaysOffSampler() }) };
}

let active: Telemetry | undefined;

/**
 * Starts the OpenTelemetry SDK for this process: the service's resource, W3C trace-context and
 * baggage propagation, and OTLP trace export as the OTEL_* variables configure it. No
 * auto-instrumentation: Hopline opens its NATS, gRPC and HTTP spans by hand. `OTEL_SDK_DISABLED`
 * leaves the no-op API in place. One SDK per process; a second start before shutdown throws.
 */
export function startTelemetry(options: TelemetryOptions): Telemetry {
  if (active) {
    throw new Error(`telemetry is already started in this process for ${active.serviceName}; shut it down first`);
  }
  const serviceName = nonEmpty(process.env.OTEL_SERVICE_NAME) ?? options.serviceName;
  const tracing = options.spanProcessors ? { spanProcessors: options.spanProcessors } : tracingFromEnv(process.env);
  const spanProcessors = [new QuestionIdSpanProcessor(), ...tracing.spanProcessors];
  setSpansRecorded(!(tracing.sampler instanceof AlwaysOffSampler));
  const sdk = new NodeSDK({
    serviceName,
    spanProcessors,
    ...(tracing.sampler ? { sampler: tracing.sampler } : {}),
    textMapPropagator: new CompositePropagator({
      propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()],
    }),
    instrumentations: [],
    autoDetectResources: options.detectResources ?? true,
    // Logs and metrics do not go through OpenTelemetry (JSON lines and prom-client do); an
    // empty list keeps the SDK from building a default OTLP log exporter.
    logRecordProcessors: [],
  });
  sdk.start();
  const serviceProviders = options.services?.length
    ? routeSpansByService(options.services, spanProcessors, tracing.sampler, options.detectResources ?? true)
    : [];

  let stopping: Promise<void> | undefined;
  const telemetry: Telemetry = {
    serviceName,
    shutdown() {
      stopping ??= (async () => {
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<void>((resolve) => {
          timer = setTimeout(() => {
            diag.warn(`telemetry shutdown gave up after ${SHUTDOWN_TIMEOUT_MS} ms; unexported spans are lost`);
            resolve();
          }, SHUTDOWN_TIMEOUT_MS);
          timer.unref();
        });
        try {
          await Promise.race([
            Promise.all([sdk.shutdown(), ...serviceProviders.map((provider) => provider.shutdown())]),
            timeout,
          ]);
        } finally {
          clearTimeout(timer);
          // Unregister so that a later start in the same process (tests, embedded mode) can register again.
          trace.disable();
          propagation.disable();
          context.disable();
          setSpansRecorded(true);
          if (active === telemetry) active = undefined;
        }
      })();
      return stopping;
    },
  };
  active = telemetry;
  return telemetry;
}

/**
 * Puts a provider per service, over the same span processors (and so the same exports), in
 * front of the one the SDK registered, which keeps the spans that belong to no service.
 * NodeSDK builds a single provider and resource, hence the swap of the global provider.
 */
function routeSpansByService(
  services: readonly string[],
  spanProcessors: SpanProcessor[],
  sampler: Sampler | undefined,
  detect: boolean,
): BasicTracerProvider[] {
  const detected = detect
    ? defaultResource().merge(detectResources({ detectors: [envDetector, hostDetector, processDetector] }))
    : defaultResource();
  const providers = new Map(
    services.map((service) => [
      service,
      new BasicTracerProvider({
        resource: detected.merge(resourceFromAttributes({ 'service.name': service })),
        spanProcessors,
        ...(sampler ? { sampler } : {}),
      }),
    ]),
  );
  const sdkProvider = (trace.getTracerProvider() as ProxyTracerProvider).getDelegate();
  trace.disable();
  trace.setGlobalTracerProvider(new ServiceRoutingTracerProvider(providers, sdkProvider));
  return [...providers.values()];
}

/**
 * What a service's `src/instrumentation.ts` (loaded with `node --import`) calls: starts the SDK
 * and flushes it when the event loop drains. The service's own graceful shutdown calls
 * `shutdownTelemetry()` in its `finally`, which makes a signal-driven exit flush too.
 */
export function bootTelemetry(serviceName: string, options: Pick<TelemetryOptions, 'services'> = {}): Telemetry {
  const telemetry = startTelemetry({ serviceName, ...options });
  process.once('beforeExit', () => {
    void telemetry.shutdown();
  });
  return telemetry;
}

/** Flushes and stops the SDK this process started, if any. */
export async function shutdownTelemetry(): Promise<void> {
  await active?.shutdown();
}
