import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { startTelemetry, type Telemetry, type TelemetryOptions } from './sdk.js';

export interface TestTelemetry extends Telemetry {
  readonly exporter: InMemorySpanExporter;
  /** Every span ended so far. */
  spans(): ReadableSpan[];
  /** The ended spans with this name. */
  spansNamed(name: string): ReadableSpan[];
}

/**
 * The real SDK boot with an in-memory exporter in place of OTLP, for tests that assert the
 * shape of a trace. Spans are exported synchronously when they end.
 */
export function startTestTelemetry(
  serviceName = 'test',
  options: Pick<TelemetryOptions, 'services'> = {},
): TestTelemetry {
  const exporter = new InMemorySpanExporter();
  const telemetry = startTelemetry({
    serviceName,
    ...options,
    spanProcessors: [new SimpleSpanProcessor(exporter)],
    detectResources: false,
  });
  return {
    serviceName: telemetry.serviceName,
    shutdown: () => telemetry.shutdown(),
    exporter,
    spans: () => exporter.getFinishedSpans(),
    spansNamed: (name) => exporter.getFinishedSpans().filter((span) => span.name === name),
  };
}
