import { StopReason } from '@hopline/contracts';
import { createOpenAiChatModel } from '@hopline/models';
import { startScriptedOpenAiServer, type ScriptedOpenAiServer } from '@hopline/test-support';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHopReasoner } from '../src/index.js';
import { analysis, ask, corpus, eventLog, fixedAnalyzer, keepOrder, overlapRetriever } from './support/fixtures.js';
import { bridgeHopsFound, isExtraction, isSynthesis, numberOf } from './support/scripted-model.js';

let server: ScriptedOpenAiServer;
beforeEach(async () => {
  server = await startScriptedOpenAiServer();
});
afterEach(async () => {
  await server.close();
});

describe('model answer: no token after the asker cancels', () => {
  it('model answer - a model stream whose deltas were already received sends no token after the caller aborts, and done records the answer as far as it was sent', async () => {
    const bridgeHops = bridgeHopsFound();
    server.setRule((body) => {
      if (isExtraction(body)) return bridgeHops(body);
      if (isSynthesis(body)) {
        const star = numberOf(body, 'Mirela Dunstan');
        const film = numberOf(body, 'No Harbour (1936 film)');
        // No pause: the whole stream reaches the client in one read, as a fast server's does.
        return {
          deltas: [
            `Tobias Wrenfield [${star}]. `,
            `Mirela Dunstan starred in No Harbour [${film}]. `,
            `In 1954 she became the wife of Tobias Wrenfield [${star}]. `,
            `No Harbour is a 1936 Velmarian mystery film [${film}].`,
          ],
        };
      }
      return undefined;
    });
    const chat = createOpenAiChatModel({ baseURL: server.baseURL, model: 'scripted', attempts: 1 });
    const reasoner = createHopReasoner({
      analyzer: fixedAnalyzer(analysis()),
      retriever: overlapRetriever(corpus),
      reranker: keepOrder,
      chat,
      config: { topK: 4 },
    });
    const controller = new AbortController();
    const log = eventLog();
    const { done } = await reasoner.answer(ask(), {
      signal: controller.signal,
      emit: (event) => {
        log.emit(event);
        if (event.event === 'token') controller.abort();
      },
    });
    expect(done.stopReason).toBe(StopReason.CANCELLED);
    // AnswerOptions.signal: "Aborts when the asker is gone: no further hops, no further tokens."
    expect(log.of('token')).toHaveLength(1);
    expect(done.answer).toBe(log.of('token')[0]?.token.text);
    expect(done.answer).not.toBe('');
  });

  it('model answer - a model stream that ignores its signal still sends no token after the caller aborts', async () => {
    const reasoner = createHopReasoner({
      analyzer: fixedAnalyzer(analysis()),
      retriever: overlapRetriever(corpus),
      reranker: keepOrder,
      chat: {
        model: 'ignores-signal',
        complete: (async () => {
          throw new Error('no extraction in this test');
        }) as never,
        async *stream() {
          yield 'Mirela Dunstan starred in No Harbour [1]. ';
          yield 'In 1954 she became the wife of Tobias Wrenfield [2]. ';
          yield 'Tobias Wrenfield was a government minister [2]. ';
          return { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
        },
      },
      config: { topK: 4 },
    });
    const controller = new AbortController();
    const log = eventLog();
    await reasoner.answer(ask(), {
      signal: controller.signal,
      emit: (event) => {
        log.emit(event);
        if (event.event === 'token') controller.abort();
      },
    });
    expect(log.of('token')).toHaveLength(1);
  });
});
