import type { IncomingMessage, ServerResponse } from 'node:http';
import { SpanKind, trace } from '@opentelemetry/api';
import type { DurableStream, KeyValueStore } from '@hopline/bus';
import { codecs, ingestMessageId, subjects, subjectToken, type QaEvent__Output } from '@hopline/contracts';
import { extractContext, instrument, markSpanFailed } from '@hopline/telemetry';
import { bearerToken, type ApiKeyStore, type Principal } from './api-keys.js';
import type { AskService, QuestionStream } from './ask-service.js';
import type { KbService } from './kb-service.js';
import { docIdSchema } from './document-id.js';
import { EVENT_SCHEMA, renderEvent } from './event-json.js';
import { readJsonBody } from './http-body.js';
import { acceptDocuments, isIngestionContentType, type IngestionSettings } from './ingestion/ingest-route.js';
import { problemFromErrorEvent, problemFromPartialDone, problems, sendProblem, toProblem } from './problem.js';
import { SseWriter } from './sse.js';
import type { StaticSite } from './static-site.js';

export interface GatewayLogger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export interface HttpSettings extends IngestionSettings {
  /** The largest body of every request but ingestion's (MAX_BODY_BYTES). */
  maxBodyBytes: number;
  sseHeartbeatMs: number;
  /** Suggested to EventSource clients as their reconnect delay. */
  sseRetryMs: number;
}

export interface HttpAppDeps {
  asks: AskService;
  kbs: KbService;
  keys: ApiKeyStore;
  traces: KeyValueStore;
  ingest: DurableStream;
  /** Where bodies too large for one bus message go ahead of their ingest command. */
  documentBodies: DurableStream;
  site: StaticSite;
  logger: GatewayLogger;
  settings: HttpSettings;
  /** Called after the gateway itself wrote to a kb, so answers cached before are not served. */
  kbWritten: (tenantId: string, kbId: string) => Promise<void>;
  /** Whether the document is indexed, and at which version, counting everything accepted before the call. */
  lookupDocument: (tenantId: string, kbId: string, docId: string) => Promise<{ exists: boolean; version: number }>;
}

type Route = (request: IncomingMessage, response: ServerResponse, params: string[]) => Promise<void>;

/** The gateway's HTTP API and web page as one request listener. */
export function createHttpApp(deps: HttpAppDeps): (request: IncomingMessage, response: ServerResponse) => void {
  const routes: Array<{ method: string; pattern: RegExp; name: string; handle: Route }> = [
    {
      method: 'GET',
      pattern: /^\/(index\.html|app\.js|style\.css)?$/,
      name: 'GET /',
      handle: (req, res, [file]) => serveSite(deps, res, file),
    },
    { method: 'POST', pattern: /^\/v1\/ask$/, name: 'POST /v1/ask', handle: (req, res) => ask(deps, req, res) },
    {
      method: 'GET',
      pattern: /^\/v1\/questions\/([^/]+)\/events$/,
      name: 'GET /v1/questions/{id}/events',
      handle: (req, res, p) => resume(deps, req, res, p),
    },
    {
      method: 'DELETE',
      pattern: /^\/v1\/questions\/([^/]+)$/,
      name: 'DELETE /v1/questions/{id}',
      handle: (req, res, p) => cancel(deps, req, res, p),
    },
    {
      method: 'GET',
      pattern: /^\/v1\/questions\/([^/]+)\/trace$/,
      name: 'GET /v1/questions/{id}/trace',
      handle: (req, res, p) => getTrace(deps, req, res, p),
    },
    { method: 'GET', pattern: /^\/v1\/kbs$/, name: 'GET /v1/kbs', handle: (req, res) => listKbs(deps, req, res) },
    {
      method: 'GET',
      pattern: /^\/v1\/kbs\/([^/]+)$/,
      name: 'GET /v1/kbs/{kb}',
      handle: async (req, res, [kbId = '']) => sendJson(res, 200, await deps.kbs.get(authenticate(deps, req), kbId)),
    },
    {
      method: 'PUT',
      pattern: /^\/v1\/kbs\/([^/]+)$/,
      name: 'PUT /v1/kbs/{kb}',
      handle: (req, res, p) => createKb(deps, req, res, p),
    },
    {
      method: 'DELETE',
      pattern: /^\/v1\/kbs\/([^/]+)$/,
      name: 'DELETE /v1/kbs/{kb}',
      handle: async (req, res, [kbId = '']) => sendJson(res, 200, await deps.kbs.delete(authenticate(deps, req), kbId)),
    },
    {
      method: 'POST',
      pattern: /^\/v1\/kbs\/([^/]+)\/documents$/,
      name: 'POST /v1/kbs/{kb}/documents',
      handle: (req, res, p) => ingestDocuments(deps, req, res, p),
    },
    {
      method: 'DELETE',
      pattern: /^\/v1\/kbs\/([^/]+)\/documents\/([^/]+)$/,
      name: 'DELETE /v1/kbs/{kb}/documents/{doc}',
      handle: (req, res, p) => deleteDocument(deps, req, res, p),
    },
  ];

  return (request, response) => {
    const path = new URL(request.url ?? '/', 'http://gateway').pathname;
    const matches = routes.filter((route) => route.pattern.test(path));
    const route = matches.find(
      (candidate) => candidate.method === request.method || (candidate.method === 'GET' && request.method === 'HEAD'),
    );
    if (!route) {
      sendProblem(
        response,
        matches.length > 0
          ? problems.methodNotAllowed(matches.map((m) => m.method).join(', '))
          : problems.notFound(`no route for ${path}`),
      );
      return;
    }
    let params: string[];
    try {
      params = (route.pattern.exec(path) ?? [])
        .slice(1)
        .map((value) => (value === undefined ? '' : decodeURIComponent(value)));
    } catch {
      sendProblem(response, problems.notFound(`no route for ${path}`));
      return;
    }
    const spanOptions = {
      kind: SpanKind.SERVER,
      // A client that sends `traceparent` gets the question in its own trace.
      parent: extractContext(headerCarrier(request)),
      attributes: { 'http.request.method': request.method ?? '', 'http.route': route.name },
    };
    void instrument(route.name, spanOptions, async (span) => {
      try {
        await route.handle(request, response, params);
        span.setAttribute('http.response.status_code', response.statusCode);
        // An answered failure (a question that ended in a 504 problem document) is a failed span too.
        if (response.statusCode >= 500) markSpanFailed(span, String(response.statusCode), response.statusMessage);
      } catch (error) {
        const problem = toProblem(error);
        if (problem.status >= 500) deps.logger.error('request failed', { route: route.name, error });
        else if (problem.slug === 'client-closed-request')
          deps.logger.info('client closed the request', { route: route.name });
        span.setAttribute('http.response.status_code', problem.status);
        // OpenTelemetry's HTTP conventions: a server span fails on 5xx, not on the client's 4xx.
        if (problem.status >= 500) markSpanFailed(span, String(problem.status), problem.detail ?? problem.title, error);
        sendProblem(response, problem);
      }
    });
  };
}

function headerCarrier(request: IncomingMessage): Record<string, string> {
  const carrier: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (typeof value === 'string') carrier[name] = value;
  }
  return carrier;
}

function authenticate(deps: HttpAppDeps, request: IncomingMessage): Principal {
  const key = bearerToken(request.headers.authorization);
  if (!key) throw problems.unauthenticated('send Authorization: Bearer <api key>');
  const principal = deps.keys.verify(key);
  if (!principal) throw problems.unauthenticated('the API key is not known');
  return principal;
}

const wantsEventStream = (request: IncomingMessage) => /\btext\/event-stream\b/.test(request.headers.accept ?? '');

async function ask(deps: HttpAppDeps, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const principal = authenticate(deps, request);
  const stream = await deps.asks.ask(
    principal,
    await readJsonBody(request, deps.settings.maxBodyBytes, 'MAX_BODY_BYTES'),
  );
  if (wantsEventStream(request)) await streamAsSse(deps, stream, 0, response);
  else await respondWithDone(stream, response);
}

/** `GET /v1/questions/{id}/events` with `Last-Event-ID` (or `?lastEventId=`): the rest of a question's stream. */
async function resume(
  deps: HttpAppDeps,
  request: IncomingMessage,
  response: ServerResponse,
  [questionId = '']: string[],
): Promise<void> {
  const principal = authenticate(deps, request);
  const raw =
    request.headers['last-event-id'] ??
    new URL(request.url ?? '/', 'http://gateway').searchParams.get('lastEventId') ??
    '0';
  const text = Array.isArray(raw) ? (raw[0] ?? '') : raw;
  // Decimal digits only: Number() would also read "0x10", "1e3" or " 7 ".
  const lastEventId = /^\d{1,15}$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(lastEventId))
    throw problems.invalidRequest('Last-Event-ID must be a non-negative decimal integer (an event id)');
  await streamAsSse(deps, await deps.asks.resume(principal, questionId, lastEventId, 'sse'), lastEventId, response);
}

async function cancel(
  deps: HttpAppDeps,
  request: IncomingMessage,
  response: ServerResponse,
  [questionId = '']: string[],
): Promise<void> {
  const principal = authenticate(deps, request);
  sendJson(response, 200, { questionId, ...(await deps.asks.cancel(principal, questionId)) });
}

/** An AbortSignal that fires when the client closes the connection before the response ended. */
function disconnectSignal(response: ServerResponse): AbortSignal {
  const disconnected = new AbortController();
  // A client can go away while the question is still being accepted; its 'close' has then
  // already fired and would never reach a listener added now.
  if (response.destroyed && !response.writableFinished) {
    disconnected.abort();
    return disconnected.signal;
  }
  response.once('close', () => {
    if (!response.writableFinished) disconnected.abort();
  });
  return disconnected.signal;
}

async function streamAsSse(
  deps: HttpAppDeps,
  stream: QuestionStream,
  afterSeq: number,
  response: ServerResponse,
): Promise<void> {
  const signal = disconnectSignal(response);
  const sse = new SseWriter(response, {
    heartbeatMs: deps.settings.sseHeartbeatMs,
    retryMs: deps.settings.sseRetryMs,
    headers: { 'Hopline-Question-Id': stream.questionId, 'Hopline-Event-Schema': EVENT_SCHEMA },
  });
  try {
    for await (const event of stream.read(afterSeq, signal)) {
      await sse.send(renderEvent(event));
      // The stream's status is 200 from its first byte: a question that fails marks the span instead.
      if (event.event === 'error' && event.error && event.error.code !== 'cancelled') {
        const span = trace.getActiveSpan();
        if (span) markSpanFailed(span, event.error.code, event.error.message);
      }
      if (signal.aborted) break;
    }
  } catch (error) {
    // A reader that went away is the normal end of a dropped stream: the question waits for a resume.
    if (!signal.aborted) throw error;
  } finally {
    sse.end();
  }
}

async function respondWithDone(stream: QuestionStream, response: ServerResponse): Promise<void> {
  const signal = disconnectSignal(response);
  let terminal: QaEvent__Output | undefined;
  try {
    for await (const event of stream.read(0, signal)) terminal = event;
  } catch (error) {
    if (signal.aborted) return;
    throw error;
  }
  response.setHeader('Hopline-Question-Id', stream.questionId);
  if (terminal?.event === 'done') {
    const done = renderEvent(terminal).data;
    const partial = problemFromPartialDone(terminal.done?.stopReason ?? '', done);
    if (partial) sendProblem(response, partial);
    else sendJson(response, 200, done);
    return;
  }
  sendProblem(response, problemFromErrorEvent(terminal?.error));
}

function serveSite(deps: HttpAppDeps, response: ServerResponse, file: string | undefined): Promise<void> {
  const asset = deps.site.get(file || 'index.html');
  if (!asset) throw problems.notFound('no such page');
  response.writeHead(200, {
    'Content-Type': asset.contentType,
    'Content-Length': asset.body.length,
    'Cache-Control': 'no-cache',
    // The page renders answers and document text: nothing it shows may run as script.
    'Content-Security-Policy':
      "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'",
    'X-Content-Type-Options': 'nosniff',
  });
  response.end(asset.body);
  return Promise.resolve();
}

async function getTrace(
  deps: HttpAppDeps,
  request: IncomingMessage,
  response: ServerResponse,
  [questionId = '']: string[],
): Promise<void> {
  const principal = authenticate(deps, request);
  let key: string;
  try {
    key = subjectToken(questionId, 'question id');
  } catch {
    throw problems.notFound('no such question');
  }
  const stored = await deps.traces.get(key);
  const reasoning = stored ? codecs.reasoningTrace.decode(stored) : undefined;
  // Another tenant's or user's question is reported as absent, so ids leak nothing.
  if (!reasoning || reasoning.scope?.tenantId !== principal.tenantId || reasoning.scope.userId !== principal.userId) {
    throw problems.notFound('no such question');
  }
  sendJson(response, 200, reasoning);
}

async function listKbs(deps: HttpAppDeps, request: IncomingMessage, response: ServerResponse): Promise<void> {
  sendJson(response, 200, await deps.kbs.list(authenticate(deps, request)));
}

/** `PUT /v1/kbs/{kb}`: 201 when it creates the kb, 200 when it existed already. */
async function createKb(
  deps: HttpAppDeps,
  request: IncomingMessage,
  response: ServerResponse,
  [kbId = '']: string[],
): Promise<void> {
  const { kb, created } = await deps.kbs.create(authenticate(deps, request), kbId);
  sendJson(response, created ? 201 : 200, kb);
}

function requireIngestScope(principal: Principal, kbId: string): void {
  if (!principal.canIngest) throw problems.forbidden('this key may not ingest documents');
  if (!principal.kbIds.includes(kbId)) throw problems.forbidden(`this key may not write to "${kbId}"`);
}

async function ingestDocuments(
  deps: HttpAppDeps,
  request: IncomingMessage,
  response: ServerResponse,
  [kbId = '']: string[],
): Promise<void> {
  const principal = authenticate(deps, request);
  requireIngestScope(principal, kbId);
  if (!isIngestionContentType(request.headers['content-type']))
    throw problems.unsupportedMediaType('application/json, or application/x-ndjson with one document per line');
  const streams = { ingest: deps.ingest, bodies: deps.documentBodies };
  try {
    const accepted = await acceptDocuments(streams, deps.settings, request, principal.tenantId, kbId);
    sendJson(response, 202, { kbId, accepted });
  } finally {
    // Documents accepted before a bad line stay accepted: answers cached before them are stale.
    await deps.kbWritten(principal.tenantId, kbId);
  }
}

async function deleteDocument(
  deps: HttpAppDeps,
  request: IncomingMessage,
  response: ServerResponse,
  [kbId = '', docId = '']: string[],
): Promise<void> {
  const principal = authenticate(deps, request);
  requireIngestScope(principal, kbId);
  const valid = docIdSchema.safeParse(docId);
  if (!valid.success) throw problems.invalidRequest(valid.error.issues.map((issue) => issue.message).join('; '));
  const current = await deps.lookupDocument(principal.tenantId, kbId, docId);
  if (!current.exists) throw problems.notFound(`no document "${docId}" in kb "${kbId}"`);
  // Never below the version indexed: a gateway whose clock runs behind still deletes it.
  const version = Math.max(Date.now(), current.version);
  await deps.ingest.publish(
    subjects.ingest(principal.tenantId, kbId),
    codecs.ingestCommand.encode({ delete: { tenantId: principal.tenantId, kbId, docId, version } }),
    { msgId: ingestMessageId('delete', principal.tenantId, kbId, docId, version) },
  );
  await deps.kbWritten(principal.tenantId, kbId);
  sendJson(response, 202, { kbId, docId, deleted: true, version });
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const json = JSON.stringify(body);
  response.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(json) });
  response.end(json);
}
