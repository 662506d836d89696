import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import type { Logger } from '@hopline/telemetry';
import { problemDocument, problems, toProblem, type Problem } from '../problem.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The setting a 413 names (the route's body limit comes from it); MAX_BODY_BYTES unless said. */
    bodyLimitSetting?: string;
    /** What a 415 tells the client to send instead. */
    accepts?: string;
  }
}

/** The route as spans and logs name it: `GET /v1/questions/{id}/events`. */
export function routeName(request: FastifyRequest): string {
  const method = request.method === 'HEAD' ? 'GET' : request.method;
  return `${method} ${request.routeOptions.url?.replace(/:(\w+)/g, '{$1}') ?? request.url}`;
}

/** Sends a problem document, or ends a response whose status already went out. */
export function replyProblem(reply: FastifyReply, problem: Problem): FastifyReply {
  if (reply.raw.headersSent) {
    reply.raw.end();
    return reply;
  }
  return (
    reply
      .code(problem.status)
      .headers(problem.headers)
      .type('application/problem+json')
      // Serialized here, not by fastify, which would add a charset parameter problem+json does not define.
      .serializer(JSON.stringify)
      .send(problemDocument(problem))
  );
}

/**
 * A failure a client caused is not the gateway's error; one it did not cause is, with its stack.
 * A 503 that tells the client when to retry (the index catching up, no worker yet, the gateway
 * shutting down) is a refusal for now, expected while the fleet changes: a warning, not an error.
 */
export function logProblem(logger: Logger, route: string, problem: Problem, error: unknown): void {
  if (isRetryableRefusal(problem)) {
    logger.warn('request refused for now; the client may retry', {
      route,
      problem: problem.slug,
      detail: problem.detail,
      retryAfterSeconds: Number(problem.headers['Retry-After']),
    });
  } else if (problem.status >= 500) logger.error('request failed', { route, error });
  else if (problem.slug === 'client-closed-request') logger.info('client closed the request', { route });
}

const isRetryableRefusal = (problem: Problem): boolean =>
  problem.status === 503 && problem.headers['Retry-After'] !== undefined;

/**
 * Errors raised before a handler runs (authentication, body parsing, schema validation) as the
 * problem the client gets; a handler's own errors are Problems already.
 */
export function problemFromRequestError(error: FastifyError, request: FastifyRequest): Problem {
  if (hasZodFastifySchemaValidationErrors(error)) {
    return problems.invalidRequest(
      error.validation
        .map((issue) => {
          const path = issue.instancePath.slice(1).replaceAll('/', '.');
          return path ? `${path}: ${issue.message}` : issue.message;
        })
        .join('; '),
    );
  }
  const config = request.routeOptions.config;
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return problems.payloadTooLarge(request.routeOptions.bodyLimit ?? 0, config.bodyLimitSetting ?? 'MAX_BODY_BYTES');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return problems.unsupportedMediaType(config.accepts);
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return problems.badRequest('the body is not as long as its Content-Length says');
    case 'FST_ERR_BAD_URL':
      return problems.notFound(`no route for ${request.url}`);
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return problems.badRequest('a path segment is longer than any kb, document or question id may be');
  }
  return toProblem(error);
}

/**
 * Answers what Node's HTTP parser refuses before any route sees it (headers too large,
 * malformed, timed out) as problem+json too, written on the socket itself.
 */
export function answerParserError(error: NodeJS.ErrnoException, socket: Socket): void {
  // A connection the client reset cannot be answered; one whose response began must not be.
  if (error.code === 'ECONNRESET' || !socket.writable || socketResponseStarted(socket)) {
    socket.destroy();
    return;
  }
  socket.end(rawProblem(parserProblem(error)));
}

function parserProblem(error: NodeJS.ErrnoException): Problem {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return problems.headersTooLarge();
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return problems.requestTimeout();
    default:
      return problems.badRequest(`the request could not be parsed (${error.code ?? 'unknown'})`);
  }
}

/** Node keeps the response a socket is writing, if any, on the socket. */
function socketResponseStarted(socket: Socket): boolean {
  const response = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  return response?.headersSent === true;
}

function rawProblem(problem: Problem): string {
  const body = JSON.stringify(problemDocument(problem));
  return [
    `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status] ?? ''}`,
    'Content-Type: application/problem+json',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}
