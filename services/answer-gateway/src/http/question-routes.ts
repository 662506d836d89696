import type { ServerResponse } from 'node:http';
import { trace } from '@opentelemetry/api';
import type { FastifyReply, onRequestHookHandler } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { subjectToken, type QaEvent__Output } from '@hopline/contracts';
import { markSpanFailed, type Logger } from '@hopline/telemetry';
import { askBodySchema } from '../ask-request.js';
import type { AskService, QuestionStream } from '../ask-service.js';
import type { Drain } from '../drain.js';
import { EVENT_SCHEMA, renderEvent } from '../event-json.js';
import type { QuestionTraces } from '../question-traces.js';
import { problemFromErrorEvent, problemFromPartialDone, problems } from '../problem.js';
import { acceptsEventStream, SseWriter } from './sse.js';
import { principalOf, refuseWhileDraining, tracedWith } from './request-context.js';
import { replyProblem } from './problem-reply.js';
import { doneSchema, eventStreamSchema, problemResponses, questionIdParams } from './schemas.js';

export interface QuestionRoutesOptions {
  asks: AskService;
  drain: Drain;
  /** The reasoning traces the hop-reasoner stores, as their askers read them. */
  traces: QuestionTraces;
  logger: Logger;
  maxQuestionChars: number;
  sseHeartbeatMs: number;
  /** How long an SSE write may wait for a client that stopped reading before its connection closes. */
  sseStallMs: number;
  /** Suggested to EventSource clients as their reconnect delay. */
  sseRetryMs: number;
}

/** Asking, following, cancelling and looking back at questions. */
export const questionRoutes: FastifyPluginAsyncZod<QuestionRoutesOptions> = async (app, options) => {
  const { asks } = options;
  const traced = tracedWith(options.logger);

  app.post(
    '/v1/ask',
    {
      onRequest: [refuseWhileDraining(options.drain), refuseResumeByAskingAgain],
      schema: {
        summary: 'Ask a question',
        description:
          'Answers as Server-Sent Events with `Accept: text/event-stream`, else as the `done` event in JSON once ' +
          'the question ended. The Hopline-Question-Id header names the question for resume, cancel and trace. ' +
          'A stream is resumed with `GET /v1/questions/{id}/events`: an ask sent again with `Last-Event-ID` ' +
          '(or `?lastEventId=`) is refused (400 `invalid-request`) rather than asked anew.',
        body: askBodySchema({ maxQuestionChars: options.maxQuestionChars }),
        response: {
          200: {
            description: 'The answer, or its event stream',
            content: { 'application/json': { schema: doneSchema }, 'text/event-stream': { schema: eventStreamSchema } },
          },
          ...problemResponses,
        },
      },
    },
    (request, reply) =>
      traced(request, reply, async () => {
        const stream = await asks.ask(principalOf(request), request.body);
        if (acceptsEventStream(request.headers.accept)) return streamAsSse(options, stream, 0, reply);
        return respondWithDone(stream, reply);
      }),
  );

  app.get(
    '/v1/questions/:id/events',
    {
      // A HEAD would run the stream, whose headers a body-less reply sends only at its end: it
      // hung as a live reader of the question. It is refused with 405 instead.
      exposeHeadRoute: false,
      schema: {
        summary: "Resume a question's event stream",
        description: 'The events after `Last-Event-ID` (or `?lastEventId=`), then the live ones.',
        params: questionIdParams,
        querystring: z.object({ lastEventId: z.string().optional() }),
        headers: z.looseObject({ 'last-event-id': z.string().optional() }),
        response: {
          200: { description: 'The event stream', content: { 'text/event-stream': { schema: eventStreamSchema } } },
          ...problemResponses,
        },
      },
    },
    (request, reply) =>
      traced(request, reply, async () => {
        const text = request.headers['last-event-id'] ?? request.query.lastEventId ?? '0';
        // Decimal digits only: Number() would also read "0x10", "1e3" or " 7 ".
        const lastEventId = /^\d{1,15}$/.test(text) ? Number(text) : Number.NaN;
        if (!Number.isSafeInteger(lastEventId))
          throw problems.invalidRequest('Last-Event-ID must be a non-negative decimal integer (an event id)');
        const stream = await asks.resume(principalOf(request), request.params.id, lastEventId, 'sse');
        return streamAsSse(options, stream, lastEventId, reply);
      }),
  );

  app.delete(
    '/v1/questions/:id',
    {
      schema: {
        summary: 'Cancel a running question',
        params: questionIdParams,
        response: { 200: z.object({ questionId: z.string(), cancelled: z.boolean() }), ...problemResponses },
      },
    },
    (request, reply) =>
      traced(request, reply, async () => {
        const { id } = request.params;
        return reply.send({ questionId: id, ...(await asks.cancel(principalOf(request), id)) });
      }),
  );

  app.get(
    '/v1/questions/:id/trace',
    {
      schema: {
        summary: "A question's stored reasoning trace",
        description: "Only to the user who asked it: another tenant's or user's question is 404, as an unknown one.",
        params: questionIdParams,
        response: { 200: z.looseObject({}).describe('hopline.v1.ReasoningTrace'), ...problemResponses },
      },
    },
    (request, reply) =>
      traced(request, reply, async () => {
        const principal = principalOf(request);
        let key: string;
        try {
          key = subjectToken(request.params.id, 'question id');
        } catch {
          throw problems.notFound('no such question');
        }
        // Another tenant's or user's question is reported as absent, so ids leak nothing.
        const reasoning = await options.traces.read(principal, key);
        if (!reasoning) throw problems.notFound('no such question');
        return reply.send({ ...reasoning });
      }),
  );
};

/**
 * An SSE client whose stream dropped may send its POST again with the last event id it saw
 * (@microsoft/fetch-event-source does): taken as an ask, it would start and bill a second
 * question, whose event ids follow the first's. It is refused before the body is read, with the
 * route that resumes. Both forms the events route takes are refused: the header, and the query
 * parameter a client that cannot set headers sends. An empty one names no event seen, so it is an
 * ordinary ask.
 */
const refuseResumeByAskingAgain: onRequestHookHandler = (request, _reply, done) => {
  const { lastEventId } = request.query as { lastEventId?: unknown };
  if (!request.headers['last-event-id'] && !lastEventId) return done();
  done(
    problems.invalidRequest(
      'Last-Event-ID (or lastEventId) resumes a question: send it on GET /v1/questions/{id}/events, with the id ' +
        'from the Hopline-Question-Id header or any event; POST /v1/ask asks a new question',
    ),
  );
};

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

/** The stream written by hand (the reply is hijacked): SSE frames go out as events arrive. */
async function streamAsSse(
  options: Pick<QuestionRoutesOptions, 'sseHeartbeatMs' | 'sseRetryMs' | 'sseStallMs'>,
  stream: QuestionStream,
  afterSeq: number,
  reply: FastifyReply,
): Promise<void> {
  reply.hijack();
  const response = reply.raw;
  const signal = disconnectSignal(response);
  const sse = new SseWriter(response, {
    heartbeatMs: options.sseHeartbeatMs,
    stallMs: options.sseStallMs,
    retryMs: options.sseRetryMs,
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

async function respondWithDone(stream: QuestionStream, reply: FastifyReply): Promise<FastifyReply | undefined> {
  const signal = disconnectSignal(reply.raw);
  let terminal: QaEvent__Output | undefined;
  try {
    for await (const event of stream.read(0, signal)) terminal = event;
  } catch (error) {
    if (signal.aborted) return undefined;
    throw error;
  }
  reply.header('Hopline-Question-Id', stream.questionId);
  if (terminal?.event !== 'done') return replyProblem(reply, problemFromErrorEvent(terminal?.error));
  const done = renderEvent(terminal).data;
  const partial = problemFromPartialDone(terminal.done?.stopReason ?? '', done);
  if (partial) return replyProblem(reply, partial);
  // Serialized as it is: `done` is already the loose object doneSchema documents, which zod's
  // response check would only copy, key by key, once per answer. With its own serializer fastify
  // adds no charset, so the type names it.
  return reply.type('application/json; charset=utf-8').serializer(JSON.stringify).send(done);
}
