import {
  BreakerOpenError,
  DeadlineExceededError,
  CancelledError,
  UnavailableError,
  ValidationError,
} from '@hopline/contracts';
import { createGuard, type Guard } from '@hopline/resilience';
import { lastUserMessage, type ScriptedOpenAiServer, startScriptedOpenAiServer, waitFor } from '@hopline/test-support';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  BudgetExhaustedError,
  createOpenAiChatModel,
  ModelOutputError,
  UsageMeter,
  type ChatModel,
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

describe('openai chat model - completions', () => {
  it('openai chat - sends the model, the messages and temperature 0 by default, and reports usage', async () => {
    server.enqueue({ content: 'Paris', promptTokens: 12, completionTokens: 3 });
    const result = await model().complete({ messages: ask, deadlineUnixMs: soon() });
    expect(result).toMatchObject({ value: 'Paris', text: 'Paris', requests: 1, model: 'scripted-model' });
    expect(result.usage).toEqual({ promptTokens: 12, completionTokens: 3, totalTokens: 15 });
    expect(server.requests[0]).toMatchObject({ model: 'scripted-model', temperature: 0, messages: ask });
  });

  it('openai chat - a JSON reply is parsed and validated, even inside a fence with prose around it', async () => {
    server.enqueue({ content: 'Here you go:\n```json\n{"city": "Paris"}\n```' });
    const result = await model().complete({ messages: ask, json: citySchema, deadlineUnixMs: soon() });
    expect(result.value).toEqual({ city: 'Paris' });
    expect(result.requests).toBe(1);
  });

  it('openai chat - a malformed JSON reply gets one repair request that names the problem, and the repaired reply is used', async () => {
    server.enqueue({ content: '{"city": Paris}' }, { content: '{"city": "Paris"}' });
    const meter = new UsageMeter();
    const result = await model().complete({ messages: ask, json: citySchema, deadlineUnixMs: soon(), meter });
    expect(result.value).toEqual({ city: 'Paris' });
    expect(result.requests).toBe(2);
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
