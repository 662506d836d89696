import { isCancelled, subjectTemplate, toHoplineError } from '@hopline/contracts';
import {
  extractContext,
  inService,
  injectContext,
  instrument,
  spansRecorded,
  type HoplineMetrics,
} from '@hopline/telemetry';
import {
  context,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
} from '@opentelemetry/api';
import type {
  Bus,
  BusHeaders,
  BusMessage,
  DurableStream,
  Endpoint,
  PublishOptions,
  RequestOptions,
  StoredMessage,
} from './bus.js';

/** The instruments the bus records its requests in, client and server side. */
export type BusMetrics = Pick<HoplineMetrics, 'natsRequests' | 'natsRequestDuration'>;

interface TracingOptions {
  metrics?: BusMetrics | undefined;
  /** The service that owns the connection: deliveries are handled as its work (`inService`). */
  service?: string | undefined;
}

/**
 * Counts one request and observes its duration when `work` settles: `outcome` is ok or the
 * error's taxonomy code, `subject` the template, so label values stay a small closed set.
 */
async function measured<T>(
  metrics: BusMetrics | undefined,
  subject: string,
  role: 'client' | 'server',
  work: () => Promise<T>,
): Promise<T> {
  if (!metrics) return work();
  const started = performance.now();
  let outcome = 'ok';
  try {
    return await work();
  } catch (error) {
    outcome = toHoplineError(error).code;
    throw error;
  } finally {
    const labels = { subject: subjectTemplate(subject), role, outcome };
    metrics.natsRequests.inc(labels);
    metrics.natsRequestDuration.observe(labels, (performance.now() - started) / 1000);
  }
}

/**
 * Adds the messaging spans of one trace per question to any bus: a PRODUCER (publish) or
 * CLIENT (request) span whose context travels in the W3C headers, and on delivery a CONSUMER
 * (subscription, durable stream) or SERVER (endpoint) span that continues the sender's trace
 * and is active while the handler runs, so that the handler's own calls are its children.
 * Span names and attributes use the subject template, never per-question tokens or payloads.
 * Both adapters return buses wrapped in it; given `metrics`, it also counts and times every
 * request it sends (role client) and every request its endpoints answer (role server).
 */
export function withTracing(bus: Bus, { metrics, service }: TracingOptions = {}): Bus {
  // A delivery never inherits whatever context happened to be active in the adapter: it starts
  // from the root, marked as the owning service's work.
  const root = service ? inService(service, ROOT_CONTEXT) : ROOT_CONTEXT;
  return {
    kind: bus.kind,
    connection: () => bus.connection(),
    onReconnected: (listener: () => void) => bus.onReconnected(listener),
    request: (subject: string, data: Uint8Array, options: RequestOptions) =>
      instrument(
        `${subjectTemplate(subject)} request`,
        {
          kind: SpanKind.CLIENT,
          attributes: messagingAttributes(subject, 'request', data),
          acceptableErrors: isCancelled,
        },
        () =>
          measured(metrics, subject, 'client', () =>
            bus.request(subject, data, { ...options, headers: injectContext({ ...options.headers }) }),
          ),
      ),
    publish: (subject: string, data: Uint8Array, options?: PublishOptions) =>
      publishInProducerSpan(subject, data, options?.headers, (headers) =>
        bus.publish(subject, data, { ...options, headers }),
      ),
    subscribe: (subject, options, handler) =>
      bus.subscribe(subject, options, (message) =>
        processInSpan(root, message, SpanKind.CONSUMER, options.queue, async () => {
          await handler(message);
        }),
      ),
    serve: (definition) =>
      bus.serve({
        ...definition,
        endpoints: definition.endpoints.map((endpoint): Endpoint => ({
          ...endpoint,
          handle: (request) =>
            processInSpan(root, request, SpanKind.SERVER, endpoint.queue ?? definition.name, () =>
              measured(metrics, endpoint.subject, 'server', () => endpoint.handle(request)),
            ),
        })),
      }),
    flush: () => bus.flush(),
    drain: () => bus.drain(),
    durableStream: async (options) => traceDurableStream(root, await bus.durableStream(options)),
    keyValue: (options) => bus.keyValue(options),
  };
}

function traceDurableStream(root: Context, stream: DurableStream): DurableStream {
  return {
    lastSequence: () => stream.lastSequence(),
    publish: (subject, data, options) =>
      instrument(
        `${subjectTemplate(subject)} publish`,
        // A value payload's size is known only once an adapter encodes or sizes it.
        {
          kind: SpanKind.PRODUCER,
          attributes: messagingAttributes(subject, 'publish', data instanceof Uint8Array ? data : undefined),
        },
        () => stream.publish(subject, data, { ...options, headers: injectContext({ ...options.headers }) }),
      ),
    consume: (options, handler, onError) =>
      stream.consume(
        options,
        (message) =>
          processInSpan(root, message, SpanKind.CONSUMER, options.durable, async (span) => {
            span.setAttribute('messaging.message.delivery_count', message.deliveryCount);
            const settlement = await handler(message);
            span.setAttribute('hopline.settlement', settlement.kind);
            return settlement;
          }),
        onError,
      ),
    last: (subject) => stream.last(subject),
    follow: (subject, options) => traceFollow(root, stream.follow(subject, options)),
    purge: (subject) => stream.purge(subject),
  };
}

/**
 * A message read from a stream gets a CONSUMER span in its sender's trace as it is handed
 * over; the reader's work with it is not in the span, since an iterator has no handler to
 * wrap. A message read again (a resumed stream) adds another such span. In a process that
 * records no spans that span is nothing anyone can read, and nothing starts under it, so
 * neither it nor the sender's context it would need is made (a gateway reads a question's
 * every event).
 */
async function* traceFollow(root: Context, messages: AsyncIterable<StoredMessage>): AsyncGenerator<StoredMessage> {
  for await (const message of messages) {
    if (spansRecorded()) {
      trace
        .getTracer('hopline')
        .startSpan(
          `${subjectTemplate(message.subject)} receive`,
          {
            kind: SpanKind.CONSUMER,
            // Not the size of a value handed over in process: that would encode it.
            attributes: messagingAttributes(
              message.subject,
              'receive',
              message.value === undefined ? message.data : undefined,
            ),
          },
          extractContext(message.headers, root),
        )
        .end();
    }
    yield message;
  }
}

type MessagingOperation = 'publish' | 'request' | 'process' | 'receive';

function messagingAttributes(
  subject: string,
  operation: MessagingOperation,
  data: Uint8Array | undefined,
  queue?: string,
): Attributes {
  const attributes: Attributes = {
    'messaging.system': 'nats',
    'messaging.destination.name': subjectTemplate(subject),
    'messaging.operation.name': operation,
    'messaging.operation.type': operation === 'process' || operation === 'receive' ? operation : 'send',
  };
  if (data !== undefined) attributes['messaging.message.body.size'] = data.byteLength;
  if (queue !== undefined) attributes['messaging.consumer.group.name'] = queue;
  return attributes;
}

/** The delivered message's own trace context is the parent, on top of the connection's root context. */
function processInSpan<T>(
  root: Context,
  message: BusMessage,
  kind: SpanKind,
  queue: string | undefined,
  work: (span: Span) => Promise<T>,
): Promise<T> {
  return instrument(
    `${subjectTemplate(message.subject)} process`,
    {
      kind,
      parent: extractContext(message.headers, root),
      attributes: messagingAttributes(message.subject, 'process', message.data, queue),
      acceptableErrors: isCancelled,
    },
    work,
  );
}

/**
 * publish() is synchronous, so its span cannot go through the async instrument(): it is
 * opened, injected into the headers and ended around the one call here.
 */
function publishInProducerSpan(
  subject: string,
  data: Uint8Array,
  headers: BusHeaders | undefined,
  send: (headers: BusHeaders) => void,
): void {
  const span = trace.getTracer('hopline').startSpan(`${subjectTemplate(subject)} publish`, {
    kind: SpanKind.PRODUCER,
    attributes: messagingAttributes(subject, 'publish', data),
  });
  try {
    send(injectContext({ ...headers }, trace.setSpan(context.active(), span)));
  } catch (error) {
    span.recordException(error instanceof Error ? error : new Error(String(error)));
    span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
    throw error;
  } finally {
    span.end();
  }
}
