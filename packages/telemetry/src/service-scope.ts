import {
  context,
  createContextKey,
  type Context,
  type Span,
  type SpanOptions,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';
import { spansRecorded } from './recording.js';

/**
 * Which service a piece of work belongs to, kept in the OpenTelemetry context so that it
 * follows the work as spans and their children do. A process that runs one service never
 * reads it; the embedded mode, five services in one process, routes each span to the tracer
 * provider (and so the `service.name`) of the service whose context started it.
 */
const SERVICE = createContextKey('hopline.service');

/** The context with its work marked as `service`'s. */
export function inService(service: string, into: Context = context.active()): Context {
  return into.setValue(SERVICE, service);
}

/** Runs `work` as `service`'s: the spans it starts, and theirs, belong to that service. */
export function runInService<T>(service: string, work: () => T): T {
  // Only the routing of recorded spans reads the mark.
  if (!spansRecorded()) return work();
  return context.with(inService(service), work);
}

function serviceOf(ctx: Context): string | undefined {
  const service = ctx.getValue(SERVICE);
  return typeof service === 'string' ? service : undefined;
}

/**
 * One tracer provider per service behind the one global provider: a span goes to the provider
 * of the service its parent context names, and to `fallback` when it names none.
 */
export class ServiceRoutingTracerProvider implements TracerProvider {
  constructor(
    private readonly providers: ReadonlyMap<string, TracerProvider>,
    private readonly fallback: TracerProvider,
  ) {}

  getTracer(name: string, version?: string, options?: { schemaUrl?: string }): Tracer {
    return new ServiceRoutingTracer((ctx) =>
      (this.providers.get(serviceOf(ctx) ?? '') ?? this.fallback).getTracer(name, version, options),
    );
  }
}

class ServiceRoutingTracer implements Tracer {
  constructor(private readonly tracerFor: (ctx: Context) => Tracer) {}

  startSpan(name: string, options?: SpanOptions, ctx: Context = context.active()): Span {
    return this.tracerFor(ctx).startSpan(name, options, ctx);
  }

  startActiveSpan<F extends (span: Span) => unknown>(name: string, fn: F): ReturnType<F>;
  startActiveSpan<F extends (span: Span) => unknown>(name: string, options: SpanOptions, fn: F): ReturnType<F>;
  startActiveSpan<F extends (span: Span) => unknown>(
    name: string,
    options: SpanOptions,
    ctx: Context,
    fn: F,
  ): ReturnType<F>;
  startActiveSpan<F extends (span: Span) => unknown>(
    name: string,
    ...rest: [F] | [SpanOptions, F] | [SpanOptions, Context, F]
  ): ReturnType<F> {
    const [options, ctx, fn] =
      rest.length === 1
        ? [{}, context.active(), rest[0]]
        : rest.length === 2
          ? [rest[0], context.active(), rest[1]]
          : rest;
    return this.tracerFor(ctx).startActiveSpan(name, options, ctx, fn);
  }
}
