import { Route, StopReason } from '@hopline/contracts';
import { createOpenAiChatModel } from '@hopline/models';
import {
  lastUserMessage,
  startScriptedOpenAiServer,
  systemPrompt,
  type ScriptedOpenAiServer,
} from '@hopline/test-support';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHopReasoner } from '../src/index.js';
import { declines } from '../src/reasoner/model-reasoner.js';
import { analysis, ask, corpus, eventLog, fixedAnalyzer, keepOrder, overlapRetriever } from './support/fixtures.js';
import { bridgeHopsFound, hopReply, isExtraction, isSynthesis, labelOf, numberOf } from './support/scripted-model.js';

let server: ScriptedOpenAiServer;
beforeEach(async () => {
  server = await startScriptedOpenAiServer();
});
afterEach(async () => {
  await server.close();
});

/** The hop loop with the scripted model, over the fixtures' corpus. */
const modelReasoner = (result = analysis()) =>
  createHopReasoner({
    analyzer: fixedAnalyzer(result),
    retriever: overlapRetriever(corpus),
    reranker: keepOrder,
    chat: createOpenAiChatModel({ baseURL: server.baseURL, model: 'scripted', attempts: 1 }),
    config: { topK: 4 },
  });

describe('model hop findings: what drives the next hop is stated by the evidence', () => {
  it('model hop - bridge entities no cited chunk states do not fill a dependent sub-question', async () => {
    let extractions = 0;
    server.setRule((body) => {
      if (isExtraction(body)) {
        extractions += 1;
        if (extractions === 1)
          return hopReply({
            answer: 'Mirela Dunstan',
            done: true,
            cited: [labelOf(body, 'No Harbour (1936 film)')],
            // Stated nowhere in the evidence: the model's own guess.
            bridgeEntities: ['Zebulon Quartermaine'],
          });
        return hopReply({ unknown: true });
      }
      if (isSynthesis(body)) return { content: 'The documents do not say.' };
      return undefined;
    });
    const retriever = overlapRetriever(corpus);
    const reasoner = createHopReasoner({
      analyzer: fixedAnalyzer(
        analysis({
          route: Route.PARALLEL,
          subQuestions: [
            { id: 'q1', text: 'Who starred in No Harbour film?', dependsOn: [] },
            { id: 'q2', text: 'Who was married to #q1?', dependsOn: ['q1'] },
          ],
        }),
      ),
      retriever,
      reranker: keepOrder,
      chat: createOpenAiChatModel({ baseURL: server.baseURL, model: 'scripted', attempts: 1 }),
      config: { topK: 4 },
    });
    await reasoner.answer(ask(), { emit: () => undefined });
    const queries = retriever.calls.map((call) => `${call.query} | ${call.seeds.join(' | ')}`);
    expect(queries.join('\n')).not.toMatch(/Zebulon Quartermaine/);
  });

  it('model hop - an answer that states nothing ("No answer" without unknown) is handed to the offline reasoner', async () => {
    server.setRule((body) => {
      if (isExtraction(body))
        return hopReply({
          answer: 'No answer',
          unknown: false,
          done: true,
          cited: [labelOf(body, 'No Harbour (1936 film)')],
        });
      if (isSynthesis(body)) return { content: 'The answer is not known.' };
      return undefined;
    });
    const reasoner = modelReasoner();
    const log = eventLog();
    const { done } = await reasoner.answer(ask(), { emit: log.emit });
    // Every chunk "states" an empty claim: such an answer cannot be checked, so it is not taken.
    expect(log.of('hopAnswer').map((event) => event.hopAnswer.answer)).not.toContain('No answer');
    expect(done.degradedReasons.join('\n')).toMatch(/states nothing the evidence could confirm/);
  });

  it('model hop - done:false without a nextQuery goes on to a next hop, not SUFFICIENT after the bridge', async () => {
    let extractions = 0;
    server.setRule((body) => {
      if (isExtraction(body)) {
        extractions += 1;
        // The bridge, explicitly not done; the model left nextQuery out, which the schema accepts.
        const reply =
          extractions === 1
            ? {
                answer: 'Mirela Dunstan',
                unknown: false,
                done: false,
                confidence: 0.6,
                cited: [labelOf(body, 'No Harbour (1936 film)')],
              }
            : {
                answer: 'Tobias Wrenfield',
                unknown: false,
                done: true,
                confidence: 0.9,
                cited: [labelOf(body, 'Mirela Dunstan')],
              };
        return { content: JSON.stringify(reply) };
      }
      if (isSynthesis(body))
        return { content: `Mirela Dunstan starred in No Harbour [${numberOf(body, 'No Harbour (1936 film)')}].` };
      return undefined;
    });
    const reasoner = createHopReasoner({
      analyzer: fixedAnalyzer(analysis()), // ITERATIVE, complexity 2: "who was married to the star of …"
      retriever: overlapRetriever(corpus),
      reranker: keepOrder,
      chat: createOpenAiChatModel({ baseURL: server.baseURL, model: 'scripted', attempts: 1 }),
      config: { topK: 4, maxHops: 3 },
    });
    const { done } = await reasoner.answer(ask(), { emit: () => undefined });
    expect({ hops: done.hops, stopReason: done.stopReason, abstained: done.abstained }).not.toEqual({
      hops: 1,
      stopReason: StopReason.SUFFICIENT,
      abstained: false,
    });
  });

  const JUDGED = 'Was No Harbour directed by Osric Vell?';
  const judgingReasoner = () => modelReasoner(analysis({ route: Route.SINGLE, complexity: 1, signals: [] }));

  it("model hop - a yes-or-no answer citing what the question asks about is the hop's answer", async () => {
    server.setRule((body) => {
      if (isExtraction(body))
        return hopReply({ answer: 'Yes', done: true, cited: [labelOf(body, 'No Harbour (1936 film)')] });
      if (isSynthesis(body)) return { content: `Yes [${numberOf(body, 'No Harbour (1936 film)')}].` };
      return undefined;
    });
    const log = eventLog();
    const { done } = await judgingReasoner().answer(ask(JUDGED), { emit: log.emit });
    expect(log.of('hopAnswer').map((event) => event.hopAnswer.answer)).toEqual(['Yes']);
    expect(done.degradedReasons).toEqual([]);
  });

  it('model hop - a yes-or-no answer citing chunks about something else goes to the offline reasoner', async () => {
    server.setRule((body) => {
      if (isExtraction(body))
        // Sela Vanu's chunk is retrieved (it shares "directed by"), and says nothing of the film asked about.
        return lastUserMessage(body).includes('Sela Vanu')
          ? hopReply({ answer: 'no', done: true, cited: [labelOf(body, 'Sela Vanu')] })
          : hopReply({ unknown: true });
      if (isSynthesis(body)) return { content: 'No.' };
      return undefined;
    });
    const log = eventLog();
    const { done } = await judgingReasoner().answer(ask(JUDGED), { emit: log.emit });
    expect(log.of('hopAnswer').map((event) => event.hopAnswer.answer)).not.toContain('no');
    expect(done.degradedReasons.join('\n')).toMatch(/judged "no" citing .* which say nothing of/);
  });

  it('model synthesis - a complete chain whose answer opens as the prompt asks a declined one to is an abstention', async () => {
    const bridgeHops = bridgeHopsFound();
    server.setRule((body) => {
      if (isExtraction(body)) return bridgeHops(body);
      if (isSynthesis(body)) {
        // The prompt tells a model how to open an answer it declines to give.
        expect(systemPrompt(body)).toMatch(/begin with "I cannot answer"/);
        return { deltas: ['I cannot answer this: the documents do not say whom Mirela Dunstan married.'] };
      }
      return undefined;
    });
    const reasoner = modelReasoner();
    const { done } = await reasoner.answer(ask(), { emit: () => undefined });
    // The model's own words, not the offline reasoner's abstention.
    expect(done.degradedReasons).toEqual([]);
    expect(done.answer).toMatch(/^I cannot answer this: the documents/);
    expect(done.abstained).toBe(true);
    expect(declines('无法回答：文档没有提到。')).toBe(true);
    expect(declines('Tobias Wrenfield [1].')).toBe(false);
  });
});
