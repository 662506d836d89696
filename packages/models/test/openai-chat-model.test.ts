import { getEventListeners } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  BreakerOpenError,
  DeadlineExceededError,
  CancelledError,
  UnavailableError,
  ValidationError,
} from '@hopline/contracts';
import { createGuard, type Guard } from '@hopline/resilience';
import { createMetrics } from '@hopline/telemetry';
import { lastUserMessage, type ScriptedOpenAiServer, startScriptedOpenAiServer, waitFor } from '@hopline/test-support';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  BudgetExhaustedError,
  createOpenAiChatModel,
  IncompleteAnswerError,
  ModelOutputError,
  RateLimitedError,
  UsageMeter,
  type ChatModel,
  type ChatRequest,
} from '../src/index.js';

let server: ScriptedOpenAiServer;
const guards: Guard[] = [];

beforeEach(async () => {
  server = await startScriptedOpenAiServer();
});
afterEach(async () => {
  for (const guard of guards.splice(0)) guard.shutdown();
  await server.close();
});

const soon = (ms = 5_000) => Date.now() + ms;
const ask = [{ role: 'user' as const, content: 'Which city?' }];
const citySchema = z.object({ city: z.string() });

function model(options: Partial<Parameters<typeof createOpenAiChatModel>[0]> = {}): ChatModel {
  return createOpenAiChatModel({ baseURL: server.baseURL, apiKey: 'test-key', model: 'scripted-model', ...options });
}

/**
 * A server that answers every request its own way, for replies the scripted server never sends
 * (bodies that are not what the chat API describes); stopped after the test.
 */
const rawServers: Array<{ close(): void }> = [];
afterEach(() => {
  for (const raw of rawServers.splice(0)) raw.close();
});
async function rawServerModel(answer: (response: ServerResponse) => void): Promise<ChatModel> {
  const raw = createServer((request, response) => {
    request.resume();
    request.on('end', () => answer(response));
  });
  await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
  rawServers.push({
    close: () => {
      raw.closeAllConnections();
      raw.close();
    },
  });
  const { port } = raw.address() as AddressInfo;
  return createOpenAiChatModel({ baseURL: `http://127.0.0.1:${port}/v1`, model: 'raw-model', attempts: 1 });
}

const completionBody = (extra: Record<string, unknown>) =>
  JSON.stringify({ id: 'raw', object: 'chat.completion', created: 0, model: 'raw-model', ...extra });
const streamChunk = (extra: Record<string, unknown>) =>
  `data: ${JSON.stringify({ id: 'raw', object: 'chat.completion.chunk', created: 0, model: 'raw-model', ...extra })}\n\n`;

describe('openai chat model - completions', () => {
  it('openai chat - sends the model, the messages and temperature 0 by default, and reports usage', async () => {
    server.enqueue({ content: 'Paris', promptTokens: 12, completionTokens: 3 });
    const result = await model().complete({ messages: ask, deadlineUnixMs: soon() });
    expect(result).toMatchObject({ value: 'Paris', text: 'Paris', model: 'scripted-model' });
    expect(result.usage).toEqual({ promptTokens: 12, completionTokens: 3, totalTokens: 15 });
    expect(server.requests[0]).toMatchObject({ model: 'scripted-model', temperature: 0, messages: ask });
  });

  it('openai chat - a JSON reply is parsed and validated, even inside a fence with prose around it', async () => {
    server.enqueue({ content: 'Here you go:\n```json\n{"city": "Paris"}\n```' });
    const result = await model().complete({ messages: ask, json: citySchema, deadlineUnixMs: soon() });
    expect(result.value).toEqual({ city: 'Paris' });
    expect(server.requests).toHaveLength(1);
  });

  it('openai chat - a malformed JSON reply gets one repair request that names the problem, and the repaired reply is used', async () => {
    server.enqueue({ content: '{"city": Paris}' }, { content: '{"city": "Paris"}' });
    const meter = new UsageMeter();
    const result = await model().complete({ messages: ask, json: citySchema, deadlineUnixMs: soon(), meter });
    expect(result.value).toEqual({ city: 'Paris' });
    expect(server.requests).toHaveLength(2);
    expect(result.usage.totalTokens).toBe(30);
    expect(meter).toMatchObject({ llmCalls: 2, tokens: 30 });
    const repair = server.requests[1];
    expect(repair?.messages.at(-2)).toEqual({ role: 'assistant', content: '{"city": Paris}' });
    expect(lastUserMessage(repair!)).toMatch(/does not parse/);
  });

  it('openai chat - a reply that fails the schema twice ends in ModelOutputError after exactly one repair', async () => {
    server.enqueue({ content: '{"town": "Paris"}' }, { content: 'I think it is Paris.' });
    const error = await model()
      .complete({ messages: ask, json: citySchema, deadlineUnixMs: soon() })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelOutputError);
    expect(server.requests).toHaveLength(2);
    expect(lastUserMessage(server.requests[1]!)).toMatch(/city/);
  });

  it('openai chat - a 5xx is retried while the deadline fits another attempt', async () => {
    server.enqueue({ status: 503 }, { content: 'Paris' });
    const result = await model().complete({ messages: ask, deadlineUnixMs: soon() });
    expect(result.value).toBe('Paris');
    expect(server.requests).toHaveLength(2);
  });

  it('openai chat - a 408 is the server timing out: DeadlineExceededError, and no reason to drop response_format', async () => {
    server.enqueue({ status: 408, message: 'request timeout' }, { content: '{"city": "Paris"}' });
    const chat = model({ attempts: 1 });
    await expect(chat.complete({ messages: ask, json: citySchema, deadlineUnixMs: soon() })).rejects.toBeInstanceOf(
      DeadlineExceededError,
    );
    expect(server.requests).toHaveLength(1);
    await chat.complete({ messages: ask, json: citySchema, deadlineUnixMs: soon() });
    expect(server.requests[1]?.response_format).toBeDefined();
  });

  it('openai chat - a 400 is not retried: it is the request, not the server', async () => {
    server.enqueue({ status: 400, message: 'bad messages' }, { content: 'never sent' });
    await expect(model().complete({ messages: ask, deadlineUnixMs: soon() })).rejects.toBeInstanceOf(ValidationError);
    expect(server.requests).toHaveLength(1);
  });

  it('openai chat - a server that never answers fails with DeadlineExceededError at the question deadline', async () => {
    server.enqueue({ hang: true }, { hang: true });
    const started = Date.now();
    await expect(model().complete({ messages: ask, deadlineUnixMs: soon(150) })).rejects.toBeInstanceOf(
      DeadlineExceededError,
    );
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it("openai chat - the caller's abort cancels the request in flight", async () => {
    server.enqueue({ hang: true });
    const controller = new AbortController();
    const pending = model().complete({ messages: ask, deadlineUnixMs: soon(), signal: controller.signal });
    await waitFor(() => server.requests.length === 1, { description: 'the request reached the server' });
    controller.abort();
    await expect(pending).rejects.toBeInstanceOf(CancelledError);
  });

  it('openai chat - a spent budget refuses the request before it is sent', async () => {
    const meter = new UsageMeter({ maxLlmCalls: 1, maxTokens: 1_000 });
    meter.record(10);
    await expect(model().complete({ messages: ask, deadlineUnixMs: soon(), meter })).rejects.toBeInstanceOf(
      BudgetExhaustedError,
    );
    expect(server.requests).toHaveLength(0);
  });
});

describe('openai chat model - replies that are not what the chat API describes', () => {
  it('openai chat - a 200 with no choices is UnavailableError, not a TypeError', async () => {
    const chat = await rawServerModel((response) =>
      response.writeHead(200, { 'content-type': 'application/json' }).end(completionBody({})),
    );
    const error = await chat.complete({ messages: ask, deadlineUnixMs: soon() }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnavailableError);
    expect((error as Error).message).toMatch(/choices/);
  });

  it('openai chat - usage without total_tokens totals prompt and completion, so the token budget still holds', async () => {
    const chat = await rawServerModel((response) =>
      response.writeHead(200, { 'content-type': 'application/json' }).end(
        completionBody({
          choices: [{ index: 0, message: { role: 'assistant', content: 'Paris' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 10, completion_tokens: 5 },
        }),
      ),
    );
    const meter = new UsageMeter({ maxLlmCalls: 100, maxTokens: 20 });
    const first = await chat.complete({ messages: ask, deadlineUnixMs: soon(), meter });
    expect(first.usage).toEqual({ promptTokens: 10, completionTokens: 5, totalTokens: 15 });
    await chat.complete({ messages: ask, deadlineUnixMs: soon(), meter });
    expect(meter).toMatchObject({ llmCalls: 2, tokens: 30, exhausted: true });
    await expect(chat.complete({ messages: ask, deadlineUnixMs: soon(), meter })).rejects.toBeInstanceOf(
      BudgetExhaustedError,
    );
  });

  it('openai chat - a token count that is not a number counts as none', async () => {
    const chat = await rawServerModel((response) =>
      response.writeHead(200, { 'content-type': 'application/json' }).end(
        completionBody({
          choices: [{ index: 0, message: { role: 'assistant', content: 'Paris' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: '10', completion_tokens: 5, total_tokens: null },
        }),
      ),
    );
    const meter = new UsageMeter();
    const result = await chat.complete({ messages: ask, deadlineUnixMs: soon(), meter });
    expect(result.usage).toEqual({ promptTokens: 0, completionTokens: 5, totalTokens: 5 });
    expect(meter.tokens).toBe(5);
  });

  it('openai chat - an error event in the middle of a stream is UnavailableError, which may be retried', async () => {
    const chat = await rawServerModel((response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write(streamChunk({ choices: [{ index: 0, delta: { content: 'Par' }, finish_reason: null }] }));
      response.end(`data: ${JSON.stringify({ error: { message: 'engine died', type: 'server_error' } })}\n\n`);
    });
    const deltas: string[] = [];
    const error = await (async () => {
      for await (const delta of chat.stream({ messages: ask, deadlineUnixMs: soon() })) deltas.push(delta);
    })().catch((e: unknown) => e);
    expect(deltas).toEqual(['Par']);
    expect(error).toBeInstanceOf(UnavailableError);
    expect(error).toMatchObject({ retryable: true, message: expect.stringMatching(/engine died/) });
  });

  it('openai chat - a stream chunk that is not a chunk is UnavailableError', async () => {
    const chat = await rawServerModel((response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.end(streamChunk({ choices: [{ index: 0, delta: { content: 42 }, finish_reason: null }] }));
    });
    await expect(
      (async () => {
        for await (const delta of chat.stream({ messages: ask, deadlineUnixMs: soon() })) expect(delta).toBeDefined();
      })(),
    ).rejects.toBeInstanceOf(UnavailableError);
  });
});

describe('openai chat model - streaming', () => {
  it('openai chat - streams the server-sent deltas in order and returns the usage of the final chunk', async () => {
    server.enqueue({ deltas: ['Par', 'is ', 'is the ', 'answer.'], promptTokens: 20, completionTokens: 4 });
    const meter = new UsageMeter();
    const stream = model().stream({ messages: ask, deadlineUnixMs: soon(), meter });
    const deltas: string[] = [];
    let step = await stream.next();
    while (!step.done) {
      deltas.push(step.value);
      step = await stream.next();
    }
    expect(deltas).toEqual(['Par', 'is ', 'is the ', 'answer.']);
    expect(step.value).toEqual({ promptTokens: 20, completionTokens: 4, totalTokens: 24 });
    expect(server.requests[0]?.stream).toBe(true);
    expect(meter).toMatchObject({ llmCalls: 1, tokens: 24 });
  });

  it('openai chat - a stream that outlives the deadline stops with DeadlineExceededError', async () => {
    server.enqueue({ deltas: ['one ', 'two ', 'three ', 'four '], pauseMs: 200 });
    const received: string[] = [];
    const error = await (async () => {
      for await (const delta of model().stream({ messages: ask, deadlineUnixMs: soon(300) })) received.push(delta);
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeadlineExceededError);
    expect(received.length).toBeLessThan(4);
  });
});

/** Every delta of a stream, then how it ended: its usage, or the error it threw. */
async function drain(chat: ChatModel, request: ChatRequest) {
  const deltas: string[] = [];
  const stream = chat.stream(request);
  try {
    let step = await stream.next();
    while (!step.done) {
      deltas.push(step.value);
      step = await stream.next();
    }
    return { deltas, usage: step.value, error: undefined };
  } catch (error) {
    return { deltas, usage: undefined, error };
  }
}

describe('openai chat model - signals', () => {
  it("openai chat - requests and streams leave no listener on the caller's signal once they end", async () => {
    // A question's signal lives across all its calls; each call's own deadline must let go of it.
    const question = new AbortController();
    server.setRule((body) => (body.stream ? { deltas: ['Paris.'] } : { content: 'Paris' }));
    for (let call = 0; call < 12; call++) {
      await model().complete({ messages: ask, deadlineUnixMs: soon(), signal: question.signal });
      for await (const delta of model().stream({ messages: ask, deadlineUnixMs: soon(), signal: question.signal }))
        expect(delta).toBe('Paris.');
    }
    expect(getEventListeners(question.signal, 'abort')).toHaveLength(0);
  });
});

describe('openai chat model - streams that do not finish', () => {
  it('openai chat - a stream that ends without a finish reason or [DONE] is an IncompleteAnswerError, after the deltas it did send', async () => {
    server.enqueue({ deltas: ['The Falcons ', 'were beaten by ', 'the Granite Falcon'], end: 'cut' });
    const { deltas, error } = await drain(model(), { messages: ask, deadlineUnixMs: soon() });
    expect(deltas.join('')).toBe('The Falcons were beaten by the Granite Falcon');
    expect(error).toBeInstanceOf(IncompleteAnswerError);
    expect(error).toMatchObject({ reason: 'cut' });
  });

  it('openai chat - a stream that stops at max_tokens (finish reason length) is incomplete, and max_tokens was sent', async () => {
    server.enqueue({ deltas: ['One ', 'two'], end: 'length', promptTokens: 30, completionTokens: 2 });
    const meter = new UsageMeter();
    const { error } = await drain(model(), { messages: ask, maxTokens: 2, deadlineUnixMs: soon(), meter });
    expect(error).toMatchObject({ reason: 'length' });
    expect(server.requests[0]?.max_tokens).toBe(2);
    expect(meter).toMatchObject({ llmCalls: 1, tokens: 32 });
  });

  it('openai chat - a stream that stalls after its first deltas ends at the deadline with DeadlineExceededError', async () => {
    server.enqueue({ deltas: ['Paris ', 'is '], end: 'stall' });
    const { deltas, error } = await drain(model(), { messages: ask, deadlineUnixMs: soon(400) });
    expect(deltas).toEqual(['Paris ', 'is ']);
    expect(error).toBeInstanceOf(DeadlineExceededError);
  });

  it("openai chat - a stream may outlast one request's timeout: that timeout covers opening it, the deadline covers the body", async () => {
    server.enqueue({ deltas: ['one ', 'two ', 'three ', 'four.'], pauseMs: 80 });
    const { deltas, error } = await drain(model({ requestTimeoutMs: 100 }), { messages: ask, deadlineUnixMs: soon() });
    expect(error).toBeUndefined();
    expect(deltas.join('')).toBe('one two three four.');
  });
});

describe('openai chat model - metrics', () => {
  const sample = async (metrics: ReturnType<typeof createMetrics>, name: string, labels: Record<string, string>) => {
    const metric = await metrics.registry.getSingleMetric(name)?.get();
    const found = metric?.values.find(
      (value) =>
        ('metricName' in value ? value.metricName : name) === (name.endsWith('_seconds') ? `${name}_count` : name) &&
        Object.entries(labels).every(([key, wanted]) => value.labels[key] === wanted),
    );
    return found?.value ?? 0;
  };

  it('openai metrics - every request is counted by model, operation and outcome, timed, with its tokens and error type', async () => {
    const metrics = createMetrics('test', { defaultMetrics: false });
    const chat = model({ metrics, attempts: 2 });
    server.enqueue(
      { status: 503, message: 'overloaded' },
      { content: 'Paris', promptTokens: 12, completionTokens: 3 },
      { content: 'Lyon', promptTokens: 7, completionTokens: 2 },
    );
    await chat.complete({ messages: ask, deadlineUnixMs: soon() });
    const streamed = chat.stream({ messages: ask, deadlineUnixMs: soon() });
    for await (const delta of streamed) expect(delta).toBeTruthy();

    const scripted = 'scripted-model';
    expect(
      await sample(metrics, 'hopline_llm_calls_total', { model: scripted, operation: 'chat', outcome: 'error' }),
    ).toBe(1);
    expect(
      await sample(metrics, 'hopline_llm_calls_total', { model: scripted, operation: 'chat', outcome: 'ok' }),
    ).toBe(1);
    expect(
      await sample(metrics, 'hopline_llm_calls_total', { model: scripted, operation: 'stream', outcome: 'ok' }),
    ).toBe(1);
    expect(
      await sample(metrics, 'hopline_llm_errors_total', { model: scripted, operation: 'chat', type: 'unavailable' }),
    ).toBe(1);
    expect(await sample(metrics, 'hopline_llm_tokens_total', { model: scripted, kind: 'prompt' })).toBe(19);
    expect(await sample(metrics, 'hopline_llm_tokens_total', { model: scripted, kind: 'completion' })).toBe(5);
    expect(
      await sample(metrics, 'hopline_llm_request_duration_seconds', {
        model: scripted,
        operation: 'chat',
        outcome: 'ok',
      }),
    ).toBe(1);
    expect(
      await sample(metrics, 'hopline_llm_request_duration_seconds', {
        model: scripted,
        operation: 'stream',
        outcome: 'ok',
      }),
    ).toBe(1);
  });
});

describe('openai chat model - rate limits and spend', () => {
  it('openai chat - a 429 is retried no sooner than its Retry-After: one the deadline cannot fit is not retried at all', async () => {
    server.enqueue({ status: 429, retryAfter: 2 }, { content: 'Paris' });
    const error = await model({ attempts: 3 })
      .complete({ messages: ask, deadlineUnixMs: soon(1_000) })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitedError);
    expect(error).toMatchObject({ retryAfterMs: 2_000 });
    expect(server.requests).toHaveLength(1);
  });

  it('openai chat - a 429 whose Retry-After fits the deadline is retried and answers', async () => {
    server.enqueue({ status: 429, retryAfter: 0 }, { content: 'Paris' });
    const result = await model().complete({ messages: ask, deadlineUnixMs: soon() });
    expect(result.value).toBe('Paris');
    expect(server.requests).toHaveLength(2);
  });

  it('openai chat - 429s are back-pressure: they never open the breaker', async () => {
    const guard = createGuard({
      downstream: 'chat-model',
      breaker: {
        errorThresholdPercentage: 50,
        volumeThreshold: 2,
        resetTimeoutMs: 60_000,
        rollingCountTimeoutMs: 10_000,
      },
    });
    guards.push(guard);
    server.setRule(() => ({ status: 429 }));
    const chat = model({ guard, attempts: 1 });
    for (let i = 0; i < 3; i += 1) {
      await expect(chat.complete({ messages: ask, deadlineUnixMs: soon() })).rejects.toBeInstanceOf(RateLimitedError);
    }
    expect(guard.state).toBe('closed');
    expect(server.requests).toHaveLength(3);
  });

  it('openai chat - every request is counted, failed attempts and retries included', async () => {
    server.enqueue({ status: 503 }, { status: 503 }, { status: 503 });
    const meter = new UsageMeter();
    await expect(
      model({ attempts: 3 }).complete({ messages: ask, deadlineUnixMs: soon(), meter }),
    ).rejects.toBeInstanceOf(UnavailableError);
    expect(server.requests).toHaveLength(3);
    expect(meter).toMatchObject({ llmCalls: 3, tokens: 0 });
  });

  it('openai chat - attempts never sent (breaker open, deadline passed) spend no budget and are not counted as requests', async () => {
    const guard = createGuard({
      downstream: 'chat-model',
      breaker: {
        errorThresholdPercentage: 50,
        volumeThreshold: 1,
        resetTimeoutMs: 60_000,
        rollingCountTimeoutMs: 10_000,
      },
    });
    guards.push(guard);
    const metrics = createMetrics('test', { defaultMetrics: false });
    server.enqueue({ status: 503 });
    const chat = model({ guard, metrics, attempts: 1 });
    await expect(chat.complete({ messages: ask, deadlineUnixMs: soon() })).rejects.toBeInstanceOf(UnavailableError);
    expect(guard.state).toBe('open');

    const meter = new UsageMeter({ maxLlmCalls: 2, maxTokens: 1_000 });
    for (let i = 0; i < 3; i += 1) {
      await expect(chat.complete({ messages: ask, deadlineUnixMs: soon(), meter })).rejects.toBeInstanceOf(
        BreakerOpenError,
      );
    }
    await expect(
      model({ metrics }).complete({ messages: ask, deadlineUnixMs: Date.now() - 1, meter }),
    ).rejects.toBeInstanceOf(DeadlineExceededError);
    expect(meter).toMatchObject({ llmCalls: 0, tokens: 0 });
    expect(server.requests).toHaveLength(1);
    const calls = await metrics.registry.getSingleMetric('hopline_llm_calls_total')?.get();
    expect(calls?.values.reduce((sum, value) => sum + value.value, 0)).toBe(1);
    const errors = await metrics.registry.getSingleMetric('hopline_llm_errors_total')?.get();
    expect(errors?.values.map((value) => value.labels.type)).toEqual(['unavailable']);
  });

  it('openai chat - a budget spent between attempts stops the retries', async () => {
    server.enqueue({ status: 503 }, { content: 'never sent' });
    const meter = new UsageMeter({ maxLlmCalls: 1, maxTokens: 1_000 });
    await expect(
      model({ attempts: 3 }).complete({ messages: ask, deadlineUnixMs: soon(), meter }),
    ).rejects.toBeInstanceOf(BudgetExhaustedError);
    expect(server.requests).toHaveLength(1);
  });
});

describe('openai chat model - response_format', () => {
  it('openai chat - a JSON request sends its schema as response_format', async () => {
    server.enqueue({ content: '{"city": "Paris"}' });
    await model().complete({ messages: ask, json: citySchema, deadlineUnixMs: soon() });
    expect(server.requests[0]?.response_format).toMatchObject({
      type: 'json_schema',
      json_schema: { name: 'reply', schema: { type: 'object', properties: { city: { type: 'string' } } } },
    });
  });

  it('openai chat - a server that refuses response_format is asked by prompt alone, and not sent it again', async () => {
    await server.close();
    server = await startScriptedOpenAiServer({ responseFormat: 'rejected' });
    server.enqueue({ content: '{"city": "Paris"}' }, { content: '{"city": "Rome"}' });
    const chat = model();
    const first = await chat.complete({ messages: ask, json: citySchema, deadlineUnixMs: soon() });
    const second = await chat.complete({ messages: ask, json: citySchema, deadlineUnixMs: soon() });
    expect([first.value, second.value]).toEqual([{ city: 'Paris' }, { city: 'Rome' }]);
    expect(server.requests.map((body) => body.response_format !== undefined)).toEqual([true, false, false]);
  });

  it('openai chat - a plain text request sends no response_format', async () => {
    server.enqueue({ content: 'Paris' });
    await model().complete({ messages: ask, deadlineUnixMs: soon() });
    expect(server.requests[0]?.response_format).toBeUndefined();
  });
});

describe('openai chat model - breaker', () => {
  it('openai chat - timeouts open the injected breaker, after which calls fail at once without reaching the server', async () => {
    const guard = createGuard({
      downstream: 'chat-model',
      breaker: {
        errorThresholdPercentage: 50,
        volumeThreshold: 2,
        resetTimeoutMs: 60_000,
        rollingCountTimeoutMs: 10_000,
      },
    });
    guards.push(guard);
    server.setRule(() => ({ hang: true }));
    const chat = model({ guard, requestTimeoutMs: 50, attempts: 1 });
    for (let i = 0; i < 2; i += 1) {
      await expect(chat.complete({ messages: ask, deadlineUnixMs: soon() })).rejects.toBeInstanceOf(
        DeadlineExceededError,
      );
    }
    expect(guard.state).toBe('open');
    const sent = server.requests.length;
    await expect(chat.complete({ messages: ask, deadlineUnixMs: soon() })).rejects.toBeInstanceOf(BreakerOpenError);
    expect(server.requests).toHaveLength(sent);
  });

  it('openai chat - a server that cannot be reached is UnavailableError', async () => {
    const address = server.baseURL;
    await server.close();
    server = await startScriptedOpenAiServer();
    await expect(
      createOpenAiChatModel({ baseURL: address, model: 'm', attempts: 1 }).complete({
        messages: ask,
        deadlineUnixMs: soon(),
      }),
    ).rejects.toBeInstanceOf(UnavailableError);
  });
});
