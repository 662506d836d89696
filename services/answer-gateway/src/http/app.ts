import type { IncomingMessage } from 'node:http';
import fastifySwagger from '@fastify/swagger';
import Fastify, { type FastifyError, type FastifyInstance } from 'fastify';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Logger } from '@hopline/telemetry';
import type { ApiKeyStore } from '../api-keys.js';
import type { AskService } from '../ask-service.js';
import { problems } from '../problem.js';
import type { QuestionTraces } from '../question-traces.js';
import type { StaticSite } from '../static-site.js';
import { kbRoutes, type KbRoutesOptions } from './kb-routes.js';
import { BodyProgressGuard } from './body-progress.js';
import { hasOnlyUtf8Charset } from './media-type.js';
import { openApiOptions } from './openapi.js';
import { answerParserError, logProblem, problemFromRequestError, replyProblem, routeName } from './problem-reply.js';
import { questionRoutes } from './question-routes.js';
import { authenticateWith, traceUntracedRequest } from './request-context.js';
import { siteRoutes } from './site-routes.js';

/** The longest path segment (kb, document or question id) a route takes. */
const MAX_PATH_SEGMENT_CHARS = 1_024;

export interface HttpSettings {
  /** The largest body of every request but ingestion's (MAX_BODY_BYTES). */
  maxBodyBytes: number;
  maxDocumentBytes: number;
  maxQuestionChars: number;
  sseHeartbeatMs: number;
  sseStallMs: number;
  /** Suggested to EventSource clients as their reconnect delay. */
  sseRetryMs: number;
  /** A client must have sent its headers within this (HTTP_HEADERS_TIMEOUT_MS)... */
  headersTimeoutMs: number;
  /** ... and its body may make no progress for longer than this while the gateway waits for it (HTTP_REQUEST_TIMEOUT_MS). */
  requestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this (HTTP_KEEP_ALIVE_TIMEOUT_MS). */
  keepAliveTimeoutMs: number;
}

export interface HttpAppDeps extends Omit<KbRoutesOptions, 'logger' | 'maxDocumentBytes'> {
  asks: AskService;
  keys: ApiKeyStore;
  traces: QuestionTraces;
  site: StaticSite;
  logger: Logger;
  settings: HttpSettings;
}

/** Answered with 405 and Allow when a path exists under other methods. */
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'] as const;

/**
 * The gateway's HTTP API and web page: fastify routes whose zod schemas validate the requests
 * and generate the OpenAPI document. Every refusal is problem+json, the HTTP parser's included;
 * the timeouts are set on purpose rather than Node's defaults (a half-sent body would hold a
 * connection for minutes).
 */
export async function createHttpApp(deps: HttpAppDeps): Promise<FastifyInstance> {
  const { settings, logger } = deps;
  const app = Fastify({
    http: {
      headersTimeout: settings.headersTimeoutMs,
      // How often Node checks the headers timeout; its default (30 s) would add up to that much to it.
      connectionsCheckingInterval: Math.min(1_000, settings.headersTimeoutMs),
    },
    // Node's request timeout bounds the whole request, which would cut a long streamed upload:
    // the body's progress is bounded instead (BodyProgressGuard).
    requestTimeout: 0,
    keepAliveTimeout: settings.keepAliveTimeoutMs,
    // Document ids come from file names and may be long; a longer path segment is refused as such.
    routerOptions: { maxParamLength: MAX_PATH_SEGMENT_CHARS },
    bodyLimit: settings.maxBodyBytes,
    clientErrorHandler: answerParserError,
    // While the gateway stops, requests still reach the routes, which answer 503 shutting-down as problem+json.
    return503OnClosing: false,
    // A path fastify cannot decode names no resource.
    frameworkErrors: (error, request, reply) => replyProblem(reply, problemFromRequestError(error, request)),
  }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  // JSON is UTF-8 (RFC 8259): a body declared in another charset would be misread, so it is refused.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (!hasOnlyUtf8Charset(request.headers['content-type'])) return done(problems.unsupportedMediaType(), undefined);
    if ((body as string).trim() === '') {
      // Clients send their usual JSON content type on a route that takes no body too (a DELETE,
      // a PUT of a kb): with no body there is nothing to misread.
      const schema = request.routeOptions.schema as { body?: unknown; documentedBody?: unknown } | undefined;
      if (schema?.body === undefined && schema?.documentedBody === undefined) return done(null, undefined);
      return done(problems.malformedJson('the body is empty'), undefined);
    }
    try {
      done(null, JSON.parse(body as string));
    } catch (error) {
      done(problems.malformedJson((error as Error).message), undefined);
    }
  });

  app.setErrorHandler<FastifyError>((error, request, reply) => {
    const problem = problemFromRequestError(error, request);
    logProblem(logger, routeName(request), problem, error);
    return replyProblem(reply, problem);
  });
  // Requests no handler traced (refused before it ran, a 404, a page) get their SERVER span here.
  app.addHook('onResponse', traceUntracedRequest);
  const bodies = new BodyProgressGuard(settings.requestTimeoutMs, (request) =>
    answerParserError(
      Object.assign(new Error('request body timed out'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }),
      request.socket,
    ),
  );
  // Every request Node hands over, those fastify refuses before its hooks run included.
  app.server.on('request', (request: IncomingMessage) => bodies.watch(request));
  app.addHook('onClose', (_instance, done) => {
    bodies.stop();
    done();
  });
  app.setNotFoundHandler((request, reply) => replyProblem(reply, problems.notFound(`no route for ${request.url}`)));

  // 405 with Allow for a path that exists under other methods: collected as routes are added.
  const methodsByUrl = new Map<string, Set<string>>();
  app.addHook('onRoute', (route) => {
    const methods = methodsByUrl.get(route.url) ?? new Set<string>();
    for (const method of [route.method].flat()) methods.add(method);
    methodsByUrl.set(route.url, methods);
  });

  await app.register(fastifySwagger, openApiOptions);
  app.get('/openapi.json', { schema: { hide: true } }, () => app.swagger());
  await app.register(siteRoutes, { site: deps.site });
  await app.register(async (api) => {
    api.addHook('onRequest', authenticateWith(deps.keys));
    await api.register(questionRoutes, {
      asks: deps.asks,
      drain: deps.drain,
      traces: deps.traces,
      logger,
      maxQuestionChars: settings.maxQuestionChars,
      sseHeartbeatMs: settings.sseHeartbeatMs,
      sseStallMs: settings.sseStallMs,
      sseRetryMs: settings.sseRetryMs,
    });
    await api.register(kbRoutes, { ...deps, maxDocumentBytes: settings.maxDocumentBytes });
  });

  for (const [url, methods] of [...methodsByUrl]) {
    const allowed = METHODS.filter((method) => methods.has(method));
    const others = METHODS.filter((method) => !methods.has(method));
    const allow = allowed.filter((method) => method !== 'HEAD').join(', ');
    app.route({
      method: [...others],
      url,
      schema: { hide: true },
      handler: (_request, reply) => replyProblem(reply, problems.methodNotAllowed(allow)),
    });
  }
  return app;
}
