import {
  CancelledError,
  DeadlineExceededError,
  HoplineError,
  UnavailableError,
  ValidationError,
  isHoplineError,
  retryAfterMs,
} from '@hopline/contracts';
import { abortReason, deadlineScope, retryWithinDeadline, withDeadline } from '@hopline/resilience';
import { instrument, type HoplineMetrics } from '@hopline/telemetry';
import OpenAI from 'openai';
import { z } from 'zod';
import { createPromptBook } from '../prompts.js';
import { BudgetExhaustedError } from '../usage.js';
import type { ChatMessage, ChatModel, ChatRequest, ChatResult, ChatUsage, JsonChatRequest } from './chat-model.js';
import { addUsage, NO_USAGE } from './chat-model.js';
import { IncompleteAnswerError, RateLimitedError } from './errors.js';
import { describeSchema, jsonSchemaOf, ModelOutputError, parseJsonReply } from './json-reply.js';

/** The part of `@hopline/resilience`'s Guard the adapter needs: a breaker with a per-call signal. */
export interface CallGuard {
  call<T>(
    work: (signal: AbortSignal) => Promise<T>,
    options: { deadlineUnixMs: number; capMs?: number; signal?: AbortSignal },
  ): Promise<T>;
}

export interface OpenAiChatModelOptions {
  /** Any server that speaks the OpenAI chat API: hosted, vLLM, Ollama… */
  baseURL: string;
  apiKey?: string;
  model: string;
  /** The breaker around the server; without one every call goes straight through. */
  guard?: CallGuard;
  /** Longest one request may take, however much of the question's deadline is left. */
  requestTimeoutMs?: number;
  /** Attempts per request, the first included; later ones only start if the deadline fits them. */
  attempts?: number;
  /**
   * Whether JSON replies are asked for with `response_format` (a JSON schema) besides the
   * prompt. Default true; a server that answers such a request with 400 is asked again without
   * it, and this adapter stops sending it to that server.
   */
  responseFormat?: boolean;
  /** Where every request's outcome, latency, tokens and error type are counted; none when absent. */
  metrics?: LlmMetrics;
}

/** The LLM instruments of a service's registry. */
export type LlmMetrics = Pick<HoplineMetrics, 'llmCalls' | 'llmTokens' | 'llmRequestDuration' | 'llmErrors'>;
type Operation = 'chat' | 'stream';

const DEFAULT_REQUEST_TIMEOUT_MS = 20_000;
const prompts = createPromptBook<'repair-json'>(new URL('../../prompts/', import.meta.url));

/** A token count as the server reported it; anything but a count is no count, not a NaN in the meter. */
const tokenCount = z.number().nonnegative().optional().catch(undefined);
/** `usage` as servers send it: some leave a count out (`total_tokens`), some send none at all. */
const reportedUsage = z
  .object({ prompt_tokens: tokenCount, completion_tokens: tokenCount, total_tokens: tokenCount })
  .nullish()
  .catch(undefined);
/** What this adapter reads of a chat completion. */
const chatCompletion = z.object({
  choices: z.array(z.object({ message: z.object({ content: z.string().nullish() }) })),
  usage: reportedUsage,
});
/** What this adapter reads of a stream chunk; a chunk that carries only the usage may leave the choices out. */
const chatCompletionChunk = z.object({
  choices: z
    .array(
      z.object({
        delta: z.object({ content: z.string().nullish() }).nullish(),
        finish_reason: z.string().nullish(),
      }),
    )
    .default([]),
  usage: reportedUsage,
});

/** A reply checked against what this adapter reads of it: a server that sends anything else is broken. */
function readReply<T>(schema: z.ZodType<T>, reply: unknown, what: string, baseURL: string): T {
  const parsed = schema.safeParse(reply);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const problem = issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'invalid';
  throw new UnavailableError(`the model server at ${baseURL} sent an unexpected ${what}: ${problem}`);
}

/** The usage a server reported, its total, where it left that out, as prompt plus completion. */
function toUsage(usage: z.infer<typeof reportedUsage>): ChatUsage {
  if (!usage) return NO_USAGE;
  const promptTokens = usage.prompt_tokens ?? 0;
  const completionTokens = usage.completion_tokens ?? 0;
  return { promptTokens, completionTokens, totalTokens: usage.total_tokens ?? promptTokens + completionTokens };
}

/** The request asked for too much: a spent budget is not worth another attempt. */
const retryable = (error: HoplineError) =>
  error.retryable && error.code !== 'breaker_open' && !(error instanceof BudgetExhaustedError);
const delayOf = (error: HoplineError) => (error instanceof RateLimitedError ? error.retryAfterMs : undefined);

type OpenAiMessage = { role: ChatMessage['role']; content: string };
const toOpenAi = (messages: readonly ChatMessage[]): OpenAiMessage[] =>
  messages.map((message) => ({ role: message.role, content: message.content }));

/** An OpenAI client error in Hopline's taxonomy, so breakers and retries judge it rightly. */
function toModelError(error: unknown, signal: AbortSignal | undefined, baseURL: string): HoplineError {
  if (signal?.aborted) return abortReason(signal);
  if (isHoplineError(error)) return error;
  if (error instanceof OpenAI.APIConnectionTimeoutError)
    return new DeadlineExceededError(`the model server at ${baseURL} timed out`, { cause: error });
  if (error instanceof OpenAI.APIUserAbortError)
    return new CancelledError('the model request was cancelled', { cause: error });
  if (error instanceof OpenAI.APIConnectionError)
    return new UnavailableError(`the model server at ${baseURL} cannot be reached`, { cause: error });
  if (error instanceof OpenAI.APIError) {
    const status = error.status;
    // No status: the server failed a reply already under way (an error event in a stream). It
    // took the request, so the fault is the server's, and another attempt may fare better.
    if (status === undefined)
      return new UnavailableError(`the model server at ${baseURL} failed mid-reply: ${error.message}`, {
        cause: error,
      });
    // The server gave up waiting: a timeout, as when this client gives up, not a bad request.
    if (status === 408)
      return new DeadlineExceededError(`the model server at ${baseURL} timed out (408): ${error.message}`, {
        cause: error,
      });
    if (status === 429)
      return new RateLimitedError(
        `the model server is rate limiting (429): ${error.message}`,
        retryAfterMs(error.headers?.get('retry-after')),
        { cause: error },
      );
    if (status >= 500)
      return new UnavailableError(`the model server answered ${status}: ${error.message}`, { cause: error });
    if (status === 401)
      return new HoplineError('unauthenticated', `the model server refused the API key: ${error.message}`, {
        cause: error,
      });
    if (status === 403)
      return new HoplineError('permission_denied', `the model server denied the request: ${error.message}`, {
        cause: error,
      });
    return new ValidationError(`the model server rejected the request (${status}): ${error.message}`, { cause: error });
  }
  return new HoplineError('internal', error instanceof Error ? error.message : String(error), { cause: error });
}

/**
 * The chat port over any OpenAI-compatible server. Each request passes the guard (breaker and
 * per-call timeout) and is retried only while the question's deadline still fits an attempt
 * (after a 429, no sooner than its `Retry-After`); every attempt is checked against the
 * question's usage meter, and every one sent, failed ones included, is recorded in it. A reply
 * that is not what the chat API describes is UnavailableError. JSON replies are asked for with
 * `response_format` where the server takes it, and validated; a malformed one gets one repair
 * request, then ModelOutputError for the caller's fallback. A stream is whole only when the
 * server says it finished (`finish_reason: stop`); anything else is IncompleteAnswerError.
 */
export function createOpenAiChatModel(options: OpenAiChatModelOptions): ChatModel {
  const client = new OpenAI({
    baseURL: options.baseURL,
    // Local servers (vLLM, Ollama) take any key; the client insists on one.
    apiKey: options.apiKey ?? 'unused',
    // Retries happen here, within the question's deadline, never inside the client.
    maxRetries: 0,
  });
  const capMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const attempts = options.attempts ?? 2;
  let sendResponseFormat = options.responseFormat ?? true;
  const metrics = options.metrics;
  const model = options.model;
  const countTokens = (usage: ChatUsage) => {
    metrics?.llmTokens.inc({ model, kind: 'prompt' }, usage.promptTokens);
    metrics?.llmTokens.inc({ model, kind: 'completion' }, usage.completionTokens);
  };

  /**
   * One request, attempt by attempt. Each attempt is checked against the meter before it is
   * tried; one the guard lets through is sent, and only then counted, whatever its outcome: in
   * the meter (tokens as the server reported them, none when it failed) and in the metrics,
   * timed and, when it failed, typed by its error code. An attempt the breaker rejects, or one
   * the deadline leaves no time for, never reaches the server and spends nothing.
   */
  const guarded = <T>(
    request: ChatRequest,
    operation: Operation,
    work: (signal: AbortSignal) => Promise<T>,
    tokensOf: (result: T) => number,
  ): Promise<T> =>
    retryWithinDeadline(
      async () => {
        request.meter?.beforeCall();
        let sentAt: number | undefined;
        const send = async (signal: AbortSignal) => {
          // Without a guard, a deadline already passed still runs this, with its signal aborted.
          if (signal.aborted) throw abortReason(signal);
          sentAt = performance.now();
          try {
            return await work(signal);
          } catch (error) {
            throw toModelError(error, signal, options.baseURL);
          }
        };
        let tokens = 0;
        let outcome: 'ok' | 'error' = 'error';
        try {
          const result = await (options.guard
            ? options.guard.call(send, { deadlineUnixMs: request.deadlineUnixMs, capMs, signal: request.signal })
            : withDeadline(Math.min(request.deadlineUnixMs, Date.now() + capMs), request.signal, send));
          tokens = tokensOf(result);
          outcome = 'ok';
          return result;
        } catch (error) {
          if (sentAt !== undefined)
            metrics?.llmErrors.inc({ model, operation, type: isHoplineError(error) ? error.code : 'internal' });
          throw error;
        } finally {
          if (sentAt !== undefined) {
            request.meter?.record(tokens);
            metrics?.llmCalls.inc({ model, operation, outcome });
            metrics?.llmRequestDuration.observe({ model, operation, outcome }, (performance.now() - sentAt) / 1000);
          }
        }
      },
      { deadlineUnixMs: request.deadlineUnixMs, attempts, signal: request.signal, retryable, delayOf },
    );

  const requestText = (
    request: ChatRequest,
    messages: readonly ChatMessage[],
    schema: z.ZodType<unknown> | undefined,
  ): Promise<{ text: string; usage: ChatUsage }> =>
    instrument(
      'llm chat',
      { attributes: { 'gen_ai.request.model': options.model, 'gen_ai.operation.name': 'chat' } },
      async (span) => {
        const send = (withFormat: boolean) =>
          guarded(
            request,
            'chat',
            async (signal) =>
              readReply(
                chatCompletion,
                await client.chat.completions.create(
                  {
                    model: options.model,
                    messages: toOpenAi(messages),
                    temperature: request.temperature ?? 0,
                    ...(request.maxTokens === undefined ? {} : { max_tokens: request.maxTokens }),
                    ...(withFormat && schema
                      ? {
                          response_format: {
                            type: 'json_schema' as const,
                            json_schema: { name: 'reply', schema: jsonSchemaOf(schema), strict: false },
                          },
                        }
                      : {}),
                  },
                  { signal },
                ),
                'chat completion',
                options.baseURL,
              ),
            (completion) => {
              const usage = toUsage(completion.usage);
              countTokens(usage);
              return usage.totalTokens;
            },
          );
        const withFormat = sendResponseFormat && schema !== undefined;
        let completion: z.infer<typeof chatCompletion>;
        try {
          completion = await send(withFormat);
        } catch (error) {
          // A server that does not know response_format refuses the request: the prompt alone asks for JSON.
          if (!withFormat || !(error instanceof ValidationError)) throw error;
          span.addEvent('response_format refused; asking by prompt alone');
          completion = await send(false);
          // Refused with it and answered without it: this server does not take it.
          sendResponseFormat = false;
        }
        const usage = toUsage(completion.usage);
        span.setAttributes({
          'gen_ai.usage.input_tokens': usage.promptTokens,
          'gen_ai.usage.output_tokens': usage.completionTokens,
        });
        const text = completion.choices[0]?.message.content;
        if (typeof text !== 'string') throw new ModelOutputError('the model returned no message content');
        return { text, usage };
      },
    );

  async function complete(request: ChatRequest | JsonChatRequest<unknown>): Promise<ChatResult<unknown>> {
    const schema = 'json' in request ? request.json : undefined;
    const first = await requestText(request, request.messages, schema);
    if (schema === undefined) return { value: first.text, text: first.text, usage: first.usage, model: options.model };

    const parsed = parseJsonReply(first.text, schema);
    if (parsed.ok) return { value: parsed.value, text: first.text, usage: first.usage, model: options.model };

    const repairMessages: ChatMessage[] = [
      ...request.messages,
      { role: 'assistant', content: first.text },
      {
        role: 'user',
        content: prompts.render('repair-json', { problem: parsed.problem, schema: describeSchema(schema) }),
      },
    ];
    const second = await requestText(request, repairMessages, schema);
    const usage = addUsage(first.usage, second.usage);
    const repaired = parseJsonReply(second.text, schema);
    if (!repaired.ok) throw new ModelOutputError(`the model's reply was malformed twice: ${repaired.problem}`);
    return { value: repaired.value, text: second.text, usage, model: options.model };
  }

  async function* stream(request: ChatRequest): AsyncGenerator<string, ChatUsage> {
    // The body outlives the guarded call that opens it, so the question's deadline bounds it.
    const body = deadlineScope(request.deadlineUnixMs, request.signal);
    try {
      return yield* streamBody(request, body.signal);
    } finally {
      body.release();
    }
  }

  async function* streamBody(request: ChatRequest, bodySignal: AbortSignal): AsyncGenerator<string, ChatUsage> {
    // The guard and retries cover opening the stream: that is when a dead server shows. Each
    // attempt's connection aborts on its call's timeout only while it opens; once open, only
    // the body's deadline or the caller can cut it, so its failure is judged by one signal.
    let connection = new AbortController();
    let usage: ChatUsage = NO_USAGE;
    const chunks = await guarded(
      request,
      'stream',
      async (signal) => {
        connection = new AbortController();
        const cut = connection;
        const abort = (source: AbortSignal) => () => cut.abort(source.reason);
        const onCall = abort(signal);
        const onBody = abort(bodySignal);
        signal.addEventListener('abort', onCall, { once: true });
        bodySignal.addEventListener('abort', onBody, { once: true });
        if (bodySignal.aborted) onBody();
        try {
          return await client.chat.completions.create(
            {
              model: options.model,
              messages: toOpenAi(request.messages),
              temperature: request.temperature ?? 0,
              stream: true,
              stream_options: { include_usage: true },
              ...(request.maxTokens === undefined ? {} : { max_tokens: request.maxTokens }),
            },
            { signal: cut.signal },
          );
        } catch (error) {
          bodySignal.removeEventListener('abort', onBody);
          throw error;
        } finally {
          signal.removeEventListener('abort', onCall);
        }
      },
      // The stream's tokens are recorded once it ends.
      () => 0,
    );
    let finishReason: string | null | undefined;
    let recorded = false;
    const recordUsage = () => {
      if (recorded) return;
      recorded = true;
      request.meter?.addTokens(usage.totalTokens);
      countTokens(usage);
    };
    try {
      for await (const received of chunks) {
        // What the client already received is still read after an abort: none of it is yielded.
        if (connection.signal.aborted) throw abortReason(connection.signal);
        const chunk = readReply(chatCompletionChunk, received, 'stream chunk', options.baseURL);
        if (chunk.usage) usage = toUsage(chunk.usage);
        const choice = chunk.choices[0];
        if (choice?.finish_reason) finishReason = choice.finish_reason;
        const delta = choice?.delta?.content;
        if (delta) yield delta;
      }
      // An aborted body can end the iteration quietly; a cut-off answer must not pass as whole.
      if (connection.signal.aborted) throw abortReason(connection.signal);
    } catch (error) {
      throw toModelError(error, connection.signal, options.baseURL);
    } finally {
      recordUsage();
    }
    if (finishReason !== 'stop') {
      throw new IncompleteAnswerError(
        finishReason === 'length'
          ? 'the model stopped at its max_tokens: the answer is cut'
          : finishReason
            ? `the model stopped for ${finishReason}: the answer is cut`
            : 'the model stream ended without a finish reason: the answer is cut',
        finishReason === 'length' ? 'length' : 'cut',
      );
    }
    return usage;
  }

  return { model: options.model, complete: complete as ChatModel['complete'], stream };
}
