import { startScriptedOpenAiServer, type ScriptedOpenAiServer } from '@hopline/test-support';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createOpenAiChatModel } from '../src/index.js';

let server: ScriptedOpenAiServer;
beforeEach(async () => {
  server = await startScriptedOpenAiServer();
});
afterEach(async () => {
  await server.close();
});

describe('OpenAI-compatible chat model: a stream stops at its abort', () => {
  // chat-model.ts ChatRequest.signal: "Aborting it cancels the request, streaming included."
  it('stream - no delta is yielded after the caller aborts, even when the rest of the body was already received', async () => {
    // No pause: the server writes every delta at once, so the client has them buffered.
    server.enqueue({ deltas: ['one. ', 'two. ', 'three. ', 'four. ', 'five.'] });
    const chat = createOpenAiChatModel({ baseURL: server.baseURL, model: 'scripted', attempts: 1 });
    const controller = new AbortController();
    const received: string[] = [];
    let failure: unknown;
    try {
      for await (const delta of chat.stream({
        messages: [{ role: 'user', content: 'Count.' }],
        deadlineUnixMs: Date.now() + 5_000,
        signal: controller.signal,
      })) {
        received.push(delta);
        controller.abort();
      }
    } catch (error) {
      failure = error;
    }
    expect(failure).toBeDefined();
    expect(received).toEqual(['one. ']);
  });
});
