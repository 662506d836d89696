import { createServer, STATUS_CODES, type RequestListener, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { problems, type Problem } from './problem.js';

export interface HttpTimeouts {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
}

/**
 * The gateway's HTTP server: timeouts set on purpose rather than Node's defaults (a half-sent
 * body would hold a connection for minutes), and the requests Node's parser refuses before
 * any route sees them (headers too large, malformed, timed out) answered as problem+json too.
 */
export function createHttpServer(timeouts: HttpTimeouts, app: RequestListener): Server {
  const server = createServer(
    {
      headersTimeout: timeouts.headersTimeoutMs,
      requestTimeout: timeouts.requestTimeoutMs,
      keepAliveTimeout: timeouts.keepAliveTimeoutMs,
      // How often Node checks the two timeouts above; its default (30 s) would add up to that much to them.
      connectionsCheckingInterval: Math.min(1_000, timeouts.headersTimeoutMs, timeouts.requestTimeoutMs),
    },
    app,
  );
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // A connection the client reset cannot be answered; one whose response began must not be.
    if (error.code === 'ECONNRESET' || !socket.writable || socketResponseStarted(socket)) {
      socket.destroy();
      return;
    }
    socket.end(rawProblem(parserProblem(error)));
  });
  return server;
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
function socketResponseStarted(socket: Duplex): boolean {
  const response = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  return response?.headersSent === true;
}

function rawProblem(problem: Problem): string {
  const body = JSON.stringify({
    type: problem.type,
    title: problem.title,
    status: problem.status,
    detail: problem.detail,
  });
  return [
    `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status] ?? ''}`,
    'Content-Type: application/problem+json',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}
