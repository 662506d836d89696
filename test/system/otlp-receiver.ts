import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

/** One span as the collector saw it, with ids in hex. */
export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, unknown>;
  /** The names of the span's events. */
  events: string[];
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  statusCode: number;
}

export interface OtlpReceiver extends AsyncDisposable {
  /** Base URL for OTEL_EXPORTER_OTLP_ENDPOINT. */
  endpoint: string;
  spans(): ReceivedSpan[];
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
interface OtlpJsonRequest {
  resourceSpans?: Array<{
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: Array<{
      spans?: Array<{
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind?: number;
        attributes?: OtlpAttribute[];
        events?: Array<{ name: string }>;
        status?: { code?: number };
      }>;
    }>;
  }>;
}

// OTLP/JSON writes ids as hex; some exporters send base64. Normalise to hex.
const toHex = (id: string | undefined): string => {
  if (!id) return '';
  return /^[0-9a-f]+$/i.test(id) && (id.length === 32 || id.length === 16)
    ? id.toLowerCase()
    : Buffer.from(id, 'base64').toString('hex');
};

const attributeValue = (value: OtlpValue): unknown =>
  value.stringValue ??
  value.boolValue ??
  value.doubleValue ??
  (value.intValue === undefined ? undefined : Number(value.intValue));

const attributes = (list: OtlpAttribute[] | undefined): Record<string, unknown> =>
  Object.fromEntries((list ?? []).map((attribute) => [attribute.key, attributeValue(attribute.value)]));

/** A minimal OTLP/HTTP JSON trace receiver, in-process, on a free loopback port. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const received: ReceivedSpan[] = [];
  const server = createServer((request, response) => {
    const parts: Buffer[] = [];
    request.on('data', (part: Buffer) => parts.push(part));
    request.on('end', () => {
      if (request.method !== 'POST' || request.url !== '/v1/traces') {
        response.writeHead(404).end();
        return;
      }
      let body = Buffer.concat(parts);
      if (request.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
      const payload = JSON.parse(body.toString('utf8')) as OtlpJsonRequest;
      for (const resourceSpans of payload.resourceSpans ?? []) {
        const service = String(attributes(resourceSpans.resource?.attributes)['service.name'] ?? '');
        for (const scope of resourceSpans.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) {
            received.push({
              service,
              traceId: toHex(span.traceId),
              spanId: toHex(span.spanId),
              parentSpanId: toHex(span.parentSpanId),
              name: span.name,
              kind: span.kind ?? 0,
              attributes: attributes(span.attributes),
              events: (span.events ?? []).map((event) => event.name),
              statusCode: span.status?.code ?? 0,
            });
          }
        }
      }
      response.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans: () => [...received],
    [Symbol.asyncDispose]: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
