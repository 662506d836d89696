import {
  CancelledError,
  DeadlineExceededError,
  HoplineError,
  UnavailableError,
  ValidationError,
  isHoplineError,
} from '@hopline/contracts';
import { abortReason, deadlineSignal, retryWithinDeadline } from '@hopline/resilience';
import { instrument } from '@hopline/telemetry';
import OpenAI from 'openai';
import { createPromptBook } from '../prompts.js';
import type { ChatMessage, ChatModel, ChatRequest, ChatResult, ChatUsage, JsonChatRequest } from './chat-model.js';
import { addUsage, NO_USAGE } from './chat-model.js';
import { describeSchema, ModelOutputError, parseJsonReply } from './json-reply.js';

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
}

const DEFAULT_REQUEST_TIMEOUT_MS = 20_000;
const prompts = createPromptBook<'repair-json'>(new URL('../../prompts/', import.meta.url));

function toUsage(usage: OpenAI.CompletionUsage | null | undefined): ChatUsage {
  if (!usage) return NO_USAGE;
  return {
    promptTokens: usage.prompt_tokens,
    completionTokens: usage.completion_tokens,
    totalTokens: usage.total_tokens,
  };
}

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
    const status = error.status ?? 0;
    if (status === 429 || status >= 500)
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
 * per-call timeout), is retried only while the question's deadline still fits an attempt, and
 * is checked against and recorded in the question's usage meter. JSON replies are validated;
 * a malformed one gets one repair request, then ModelOutputError for the caller's fallback.
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

  const guarded = <T>(request: ChatRequest, work: (signal: AbortSignal) => Promise<T>): Promise<T> =>
    retryWithinDeadline(
      async () => {
        const run = async (signal: AbortSignal) => {
          try {
            return await work(signal);
          } catch (error) {
            throw toModelError(error, signal, options.baseURL);
          }
        };
        if (options.guard)
          return options.guard.call(run, { deadlineUnixMs: request.deadlineUnixMs, capMs, signal: request.signal });
        const signal = deadlineSignal(Math.min(request.deadlineUnixMs, Date.now() + capMs), request.signal);
        return run(signal);
      },
      { deadlineUnixMs: request.deadlineUnixMs, attempts, signal: request.signal },
    );

  const requestText = (request: ChatRequest, messages: readonly ChatMessage[]) =>
    instrument(
      'llm chat',
      { attributes: { 'gen_ai.request.model': options.model, 'gen_ai.operation.name': 'chat' } },
      async (span) => {
        request.meter?.beforeCall();
        const completion = await guarded(request, (signal) =>
          client.chat.completions.create(
            {
              model: options.model,
              messages: messages.map((message) => ({ role: message.role, content: message.content })),
              temperature: request.temperature ?? 0,
              ...(request.maxTokens === undefined ? {} : { max_tokens: request.maxTokens }),
            },
            { signal },
          ),
        );
        const usage = toUsage(completion.usage);
        request.meter?.record(usage.totalTokens);
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
    const first = await requestText(request, request.messages);
    if (!('json' in request))
      return { value: first.text, text: first.text, usage: first.usage, requests: 1, model: options.model };

    const parsed = parseJsonReply(first.text, request.json);
    if (parsed.ok)
      return { value: parsed.value, text: first.text, usage: first.usage, requests: 1, model: options.model };

    const repairMessages: ChatMessage[] = [
      ...request.messages,
      { role: 'assistant', content: first.text },
      {
        role: 'user',
        content: prompts.render('repair-json', { problem: parsed.problem, schema: describeSchema(request.json) }),
      },
    ];
    const second = await requestText(request, repairMessages);
    const usage = addUsage(first.usage, second.usage);
    const repaired = parseJsonReply(second.text, request.json);
    if (!repaired.ok) throw new ModelOutputError(`the model's reply was malformed twice: ${repaired.problem}`);
    return { value: repaired.value, text: second.text, usage, requests: 2, model: options.model };
  }

  async function* stream(request: ChatRequest): AsyncGenerator<string, ChatUsage> {
    request.meter?.beforeCall();
    // The body outlives the guarded call that opens it, so the question's deadline bounds it.
    const bodySignal = deadlineSignal(request.deadlineUnixMs, request.signal);
    // The guard and retries cover opening the stream: that is when a dead server shows.
    const chunks = await guarded(request, (signal) =>
      client.chat.completions.create(
        {
          model: options.model,
          messages: request.messages.map((message) => ({ role: message.role, content: message.content })),
          temperature: request.temperature ?? 0,
          stream: true,
          stream_options: { include_usage: true },
          ...(request.maxTokens === undefined ? {} : { max_tokens: request.maxTokens }),
        },
        { signal: AbortSignal.any([signal, bodySignal]) },
      ),
    );
    let usage: ChatUsage = NO_USAGE;
    try {
      for await (const chunk of chunks) {
        if (chunk.usage) usage = toUsage(chunk.usage);
        const delta = chunk.choices[0]?.delta.content;
        if (delta) yield delta;
      }
      // An aborted body can end the iteration quietly; a cut-off answer must not pass as whole.
      if (bodySignal.aborted) throw abortReason(bodySignal);
    } catch (error) {
      throw toModelError(error, bodySignal, options.baseURL);
    } finally {
      request.meter?.record(usage.totalTokens);
    }
    return usage;
  }

  return { model: options.model, complete: complete as ChatModel['complete'], stream };
}
