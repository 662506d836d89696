import { SpanKind } from '@opentelemetry/api';
import type { FastifyReply, FastifyRequest, onRequestHookHandler, onResponseHookHandler } from 'fastify';
import { extractContext, instrument, markSpanFailed, recordSpan, type Logger } from '@hopline/telemetry';
import { bearerToken, type ApiKeyStore, type Principal } from '../api-keys.js';
import type { Drain } from '../drain.js';
import { problems, toProblem } from '../problem.js';
import { logProblem, replyProblem, routeName } from './problem-reply.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Who the API key is; set on every /v1 route before its body is read. */
    principal?: Principal;
    /** Whether a route's handler opened the request's SERVER span (see tracedWith). */
    traced?: boolean;
  }
}

/**
 * Authenticates before anything else: a client without a valid key gets 401 before the
 * gateway reads a byte of its body (an upload of 50 MB included).
 */
export function authenticateWith(keys: ApiKeyStore): onRequestHookHandler {
  return (request, _reply, done) => {
    const key = bearerToken(request.headers.authorization);
    if (!key) return done(problems.unauthenticated('send Authorization: Bearer <api key>'));
    const principal = keys.verify(key);
    if (!principal) return done(problems.unauthenticated('the API key is not known'));
    request.principal = principal;
    done();
  };
}

/**
 * A route's own hook for a request that starts work: while the gateway drains it is refused after
 * authentication, before its body is read or validated, as over gRPC.
 */
export function refuseWhileDraining(drain: Drain): onRequestHookHandler {
  return (_request, _reply, done) => {
    try {
      drain.refuseNewWork();
      done();
    } catch (error) {
      done(error as Error);
    }
  };
}

export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new Error(`${routeName(request)} is not behind the authentication hook`);
  return request.principal;
}

/**
 * A route's handler in its SERVER span, a child of the client's `traceparent` when it sends
 * one. What it throws is answered as a problem here, so that the span records the status the
 * client got: failed on 5xx, not on the client's own 4xx (OpenTelemetry's HTTP conventions).
 */
export function tracedWith(logger: Logger) {
  return (request: FastifyRequest, reply: FastifyReply, handle: () => Promise<unknown>): Promise<void> => {
    const route = routeName(request);
    request.traced = true;
    const spanOptions = {
      kind: SpanKind.SERVER,
      parent: extractContext(headerCarrier(request)),
      attributes: { 'http.request.method': request.method, 'http.route': route },
    };
    return instrument(route, spanOptions, async (span) => {
      try {
        await handle();
        span.setAttribute('http.response.status_code', reply.statusCode);
        // An answered failure (a question that ended in a 504 problem document) is a failed span too.
        if (reply.statusCode >= 500) markSpanFailed(span, String(reply.statusCode), reply.raw.statusMessage);
      } catch (error) {
        const problem = toProblem(error);
        logProblem(logger, route, problem, error);
        span.setAttribute('http.response.status_code', problem.status);
        if (problem.status >= 500) markSpanFailed(span, String(problem.status), problem.detail ?? problem.title, error);
        replyProblem(reply, problem);
      }
    });
  };
}

/**
 * The SERVER span of a request whose handler opened none: one refused before its handler ran
 * (401 from authentication, 413 or 415 while its body was read, 400 from schema validation),
 * an unknown path or method, a page of the web site. It covers the request from its arrival to
 * its response, as a handler's span would; failed on 5xx only, as there.
 */
export const traceUntracedRequest: onResponseHookHandler = (request, reply, done) => {
  if (request.traced) return done();
  const status = reply.statusCode;
  // A path no route matched is named by its method alone: the raw URL would make a span name per id.
  const route = request.routeOptions.url === undefined ? undefined : routeName(request);
  recordSpan(
    route ?? request.method,
    {
      kind: SpanKind.SERVER,
      parent: extractContext(headerCarrier(request)),
      startTime: Date.now() - reply.elapsedTime,
      attributes: {
        'http.request.method': request.method,
        'http.response.status_code': status,
        ...(route === undefined ? {} : { 'http.route': route }),
        ...(request.principal ? { 'hopline.tenant_id': request.principal.tenantId } : {}),
      },
    },
    (span) => {
      if (status >= 500) markSpanFailed(span, String(status), reply.raw.statusMessage);
    },
  );
  done();
};

/**
 * The request's headers as the propagator reads them, less W3C `baggage`: a client may join
 * its trace to ours, but its baggage would travel on in every message and call of the
 * question, and name the question (`hopline.question_id`) its spans are searched by.
 */
function headerCarrier(request: FastifyRequest): Record<string, string> {
  const carrier: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (typeof value === 'string' && name !== 'baggage') carrier[name] = value;
  }
  return carrier;
}
