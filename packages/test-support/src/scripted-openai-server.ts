import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An OpenAI-compatible chat server for tests: real HTTP on a random port, answering
 * POST /v1/chat/completions from a script. Non-streaming requests get a chat.completion JSON
 * body; `stream: true` requests get real server-sent-event chunks, one per delta, then the
 * finish chunk, the usage chunk and `data: [DONE]`. It can also misbehave as real servers do:
 * cut a stream, stall in it, end it for length, answer 429 with `Retry-After`, or refuse
 * `response_format`.
 */

export interface ChatRequestBody {
  model: string;
  messages: { role: string; content: string }[];
  temperature?: number;
  max_tokens?: number;
  stream?: boolean;
  response_format?: { type: string; json_schema?: { name: string; schema: unknown; strict?: boolean } };
}

/** How a streamed reply ends. */
export type StreamEnd =
  /** Finish reason `stop`, the usage chunk, `[DONE]`: a whole answer. */
  | 'stop'
  /** Finish reason `length`: the server stopped at `max_tokens`. */
  | 'length'
  /** The body ends cleanly after the last delta, with no finish reason and no `[DONE]`. */
  | 'cut'
  /** The stream stays open after the last delta, sending nothing, until the client gives up. */
  | 'stall';

export type ScriptedReply =
  /** A complete message (JSON for a non-streaming request, one delta per word when streaming). */
  | { content: string; promptTokens?: number; completionTokens?: number }
  /** Streamed in exactly these deltas. */
  | { deltas: string[]; promptTokens?: number; completionTokens?: number; pauseMs?: number; end?: StreamEnd }
  /** An HTTP error status with an OpenAI-style error body; `retryAfter` (seconds) as a header. */
  | { status: number; message?: string; retryAfter?: number }
  /** Never answers: the connection stays open until the client gives up. */
  | { hang: true };

/** Picks the reply for a request; `undefined` falls through to the queued replies. */
export type ReplyRule = (body: ChatRequestBody, index: number) => ScriptedReply | undefined;

export interface ScriptedOpenAiServer {
  /** The base URL to give an OpenAI client: `http://127.0.0.1:<port>/v1`. */
  baseURL: string;
  /** Every request body received, in order. */
  requests: ChatRequestBody[];
  /** Replies used in order, after any rule. */
  enqueue(...replies: ScriptedReply[]): void;
  /** A rule consulted for every request before the queue. */
  setRule(rule: ReplyRule | undefined): void;
  close(): Promise<void>;
}

const DEFAULT_USAGE = { promptTokens: 10, completionTokens: 5 };

function usageOf(reply: { promptTokens?: number; completionTokens?: number }) {
  const prompt = reply.promptTokens ?? DEFAULT_USAGE.promptTokens;
  const completion = reply.completionTokens ?? DEFAULT_USAGE.completionTokens;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

async function readBody(request: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of request) parts.push(part as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface ScriptedServerOptions {
  /**
   * Whether the server takes `response_format` (as OpenAI and vLLM do) or answers 400 to a
   * request that sends it (as some OpenAI-compatible servers do). Default: it takes it.
   */
  responseFormat?: 'accepted' | 'rejected';
}

export async function startScriptedOpenAiServer(options: ScriptedServerOptions = {}): Promise<ScriptedOpenAiServer> {
  const requests: ChatRequestBody[] = [];
  const queue: ScriptedReply[] = [];
  const open = new Set<ServerResponse>();
  let rule: ReplyRule | undefined;
  let completionId = 0;

  const answer = async (body: ChatRequestBody, response: ServerResponse, reply: ScriptedReply) => {
    if ('hang' in reply) return;
    if ('status' in reply) {
      response.writeHead(reply.status, {
        'content-type': 'application/json',
        ...(reply.retryAfter === undefined ? {} : { 'retry-after': String(reply.retryAfter) }),
      });
      response.end(
        JSON.stringify({ error: { message: reply.message ?? `scripted status ${reply.status}`, type: 'scripted' } }),
      );
      return;
    }
    completionId += 1;
    const id = `chatcmpl-${completionId}`;
    const created = Math.floor(Date.now() / 1000);
    if (!body.stream) {
      const content = 'content' in reply ? reply.content : reply.deltas.join('');
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          id,
          object: 'chat.completion',
          created,
          model: body.model,
          choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
          usage: usageOf(reply),
        }),
      );
      return;
    }
    const deltas = 'deltas' in reply ? reply.deltas : reply.content.split(/(?<=\s)/);
    response.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    const send = (chunk: unknown) => response.write(`data: ${JSON.stringify(chunk)}\n\n`);
    send({
      id,
      object: 'chat.completion.chunk',
      created,
      model: body.model,
      choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }],
    });
    for (const delta of deltas) {
      if ('pauseMs' in reply && reply.pauseMs) await sleep(reply.pauseMs);
      if (response.destroyed) return;
      send({
        id,
        object: 'chat.completion.chunk',
        created,
        model: body.model,
        choices: [{ index: 0, delta: { content: delta }, finish_reason: null }],
      });
    }
    const end = 'deltas' in reply ? (reply.end ?? 'stop') : 'stop';
    if (end === 'stall') return;
    if (end === 'cut') {
      response.end();
      return;
    }
    send({
      id,
      object: 'chat.completion.chunk',
      created,
      model: body.model,
      choices: [{ index: 0, delta: {}, finish_reason: end }],
    });
    send({ id, object: 'chat.completion.chunk', created, model: body.model, choices: [], usage: usageOf(reply) });
    response.end('data: [DONE]\n\n');
  };

  const server: Server = createServer((request, response) => {
    open.add(response);
    response.on('close', () => open.delete(response));
    void (async () => {
      if (request.method !== 'POST' || request.url !== '/v1/chat/completions') {
        response.writeHead(404).end();
        return;
      }
      const body = JSON.parse(await readBody(request)) as ChatRequestBody;
      const index = requests.length;
      requests.push(body);
      if (body.response_format && options.responseFormat === 'rejected') {
        response.writeHead(400, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({ error: { message: 'response_format is not supported', type: 'invalid_request' } }),
        );
        return;
      }
      const reply = rule?.(body, index) ?? queue.shift();
      if (!reply) {
        response.writeHead(500, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ error: { message: `no scripted reply for request ${index + 1}` } }));
        return;
      }
      await answer(body, response, reply);
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    enqueue: (...replies) => queue.push(...replies),
    setRule: (next) => {
      rule = next;
    },
    close: async () => {
      for (const response of open) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The text of a request's last user message. */
export const lastUserMessage = (body: ChatRequestBody): string =>
  [...body.messages].reverse().find((message) => message.role === 'user')?.content ?? '';

/** The system prompt of a request, which names the task (extraction, synthesis, planning…). */
export const systemPrompt = (body: ChatRequestBody): string =>
  body.messages.find((message) => message.role === 'system')?.content ?? '';
