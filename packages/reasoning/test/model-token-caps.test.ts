import { BudgetExhaustedError, createOpenAiChatModel, UsageMeter } from '@hopline/models';
import { startScriptedOpenAiServer, type ScriptedOpenAiServer } from '@hopline/test-support';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createModelReasoner } from '../src/index.js';
import { corpus } from './support/fixtures.js';
import { hopReply } from './support/scripted-model.js';

let server: ScriptedOpenAiServer;
beforeEach(async () => {
  server = await startScriptedOpenAiServer();
});
afterEach(async () => {
  await server.close();
});

const extractionInput = {
  question: 'Who was married to the star of No Harbour?',
  focus: 'Who was married to the star of No Harbour?',
  hop: 1,
  expectedHops: 2,
  hopsLeft: 1,
  query: 'star of No Harbour',
  chunks: corpus.slice(0, 4),
  previous: [],
};

describe('model reasoner: every request bounds its reply', () => {
  it('model tokens - an extraction asks for no more completion tokens than the question has left after its prompt', async () => {
    server.enqueue(hopReply({ answer: 'Mirela Dunstan', cited: ['E1'], done: true }));
    const reasoner = createModelReasoner({
      chat: createOpenAiChatModel({ baseURL: server.baseURL, model: 'scripted', attempts: 1 }),
    });
    const usage = new UsageMeter({ maxLlmCalls: 10, maxTokens: 4_000 });
    usage.record(3_500);
    await reasoner.extractHopAnswer(extractionInput, {
      deadlineUnixMs: Date.now() + 5_000,
      signal: new AbortController().signal,
      usage,
    });
    const asked = server.requests[0]?.max_tokens;
    expect(asked).toBeGreaterThan(0);
    expect(asked).toBeLessThan(500);
  });

  it('model tokens - with budget to spare, an extraction still asks for a bounded reply', async () => {
    server.enqueue(hopReply({ answer: 'Mirela Dunstan', cited: ['E1'], done: true }));
    const reasoner = createModelReasoner({
      chat: createOpenAiChatModel({ baseURL: server.baseURL, model: 'scripted', attempts: 1 }),
    });
    await reasoner.extractHopAnswer(extractionInput, {
      deadlineUnixMs: Date.now() + 5_000,
      signal: new AbortController().signal,
      usage: new UsageMeter({ maxLlmCalls: 10, maxTokens: 1_000_000 }),
    });
    expect(server.requests[0]?.max_tokens).toBe(512);
  });

  it('model tokens - with too little left for the prompt and a reply, an extraction is not sent: the budget is spent', async () => {
    const reasoner = createModelReasoner({
      chat: createOpenAiChatModel({ baseURL: server.baseURL, model: 'scripted', attempts: 1 }),
    });
    const usage = new UsageMeter({ maxLlmCalls: 10, maxTokens: 4_000 });
    usage.record(3_990);
    await expect(
      reasoner.extractHopAnswer(extractionInput, {
        deadlineUnixMs: Date.now() + 5_000,
        signal: new AbortController().signal,
        usage,
      }),
    ).rejects.toBeInstanceOf(BudgetExhaustedError);
    expect(server.requests).toHaveLength(0);
  });
});
