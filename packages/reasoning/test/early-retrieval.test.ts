import type { Analysis__Output } from '@hopline/contracts';
import { Route, StopReason } from '@hopline/contracts';
import { describe, expect, it } from 'vitest';
import type { AnalyzerPort, EarlyRetrievalOutcome, RetrieveInput, RetrieverPort } from '../src/index.js';
import { createHopReasoner } from '../src/index.js';
import { analysis, ask, BRIDGE_QUESTION, fixedAnalyzer, keepOrder, overlapRetriever } from './support/fixtures.js';

/** An analyzer that answers only once released, so that what ran before it answered can be seen. */
function heldAnalyzer(result: Analysis__Output) {
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (release = resolve));
  let markAsked: () => void = () => undefined;
  const asked = new Promise<void>((resolve) => (markAsked = resolve));
  const analyzer: AnalyzerPort = {
    async analyze() {
      markAsked();
      await held;
      return result;
    },
  };
  return { analyzer, release, asked };
}

/** A retriever whose first call fails (a worker that timed out), the rest answered by `inner`. */
function failingFirst(inner: RetrieverPort): RetrieverPort & { calls: RetrieveInput[] } {
  const calls: RetrieveInput[] = [];
  return {
    calls,
    async retrieve(input, ctx) {
      calls.push(input);
      if (calls.length === 1) throw new Error('retrieval-worker timed out');
      return inner.retrieve(input, ctx);
    },
  };
}

const reasoner = (
  analyzer: AnalyzerPort,
  retriever: RetrieverPort,
  early: boolean,
  outcomes: EarlyRetrievalOutcome[] = [],
) =>
  createHopReasoner({
    analyzer,
    retriever,
    reranker: keepOrder,
    config: { topK: 4, earlyFirstRetrieval: early },
    onEarlyRetrieval: (outcome) => outcomes.push(outcome),
  });

const choice = 'Which is older, How To Lose Nothing or Sela Vanu?';
const parallel = analysis({
  route: Route.PARALLEL,
  subQuestions: [
    { id: 'q1', text: 'When was How To Lose Nothing released?', dependsOn: [] },
    { id: 'q2', text: 'When was Sela Vanu released?', dependsOn: [] },
  ],
});

describe('hop loop - the first hop searched beside the analysis (earlyFirstRetrieval)', () => {
  it("early retrieval - the question is searched before the analysis answers, and the chain's first hop takes that search instead of making its own", async () => {
    const retriever = overlapRetriever();
    const held = heldAnalyzer(analysis());
    const outcomes: EarlyRetrievalOutcome[] = [];
    const answering = reasoner(held.analyzer, retriever, true, outcomes).answer(ask(), { emit: () => undefined });
    await held.asked;
    expect(retriever.calls).toEqual([
      { query: BRIDGE_QUESTION, hydeText: '', topK: 6, hop: 1, seeds: [BRIDGE_QUESTION] },
    ]);
    held.release();
    const { done } = await answering;

    const plain = overlapRetriever();
    const reference = await reasoner(fixedAnalyzer(analysis()), plain, false).answer(ask(), { emit: () => undefined });
    expect(done).toEqual({ ...reference.done, timings: done.timings });
    expect(done).toMatchObject({ stopReason: StopReason.SUFFICIENT, hops: 2, degraded: false });
    expect(retriever.calls).toEqual(plain.calls);
    expect(outcomes).toEqual(['taken']);
  });

  it('early retrieval - a plan that splits the question leaves the early search: one search spent, the answer the same', async () => {
    const retriever = overlapRetriever();
    const outcomes: EarlyRetrievalOutcome[] = [];
    const { done } = await reasoner(fixedAnalyzer(parallel), retriever, true, outcomes).answer(ask(choice), {
      emit: () => undefined,
    });
    const plain = overlapRetriever();
    const reference = await reasoner(fixedAnalyzer(parallel), plain, false).answer(ask(choice), {
      emit: () => undefined,
    });
    expect(done).toEqual({ ...reference.done, timings: done.timings });
    expect(retriever.calls.map((call) => call.query)).toEqual([choice, ...plain.calls.map((call) => call.query)]);
    expect(outcomes).toEqual(['spent']);
  });

  it("early retrieval - a failed early search is the first hop's failure when it takes it, and unheard when a plan leaves it", async () => {
    const chain = await reasoner(fixedAnalyzer(analysis()), failingFirst(overlapRetriever()), true).answer(ask(), {
      emit: () => undefined,
    });
    expect(chain.done.degradedReasons).toEqual(['hop 1: retrieval failed: internal: retrieval-worker timed out']);

    const plan = await reasoner(fixedAnalyzer(parallel), failingFirst(overlapRetriever()), true).answer(ask(choice), {
      emit: () => undefined,
    });
    expect(plan.done).toMatchObject({ degraded: false, degradedReasons: [], abstained: false });
  });

  it('early retrieval - off (the default, and in the embedded mode, whose analysis is no round trip), nothing is searched before the analysis answers', async () => {
    const retriever = overlapRetriever();
    const held = heldAnalyzer(analysis());
    const outcomes: EarlyRetrievalOutcome[] = [];
    const answering = createHopReasoner({
      analyzer: held.analyzer,
      retriever,
      reranker: keepOrder,
      onEarlyRetrieval: (outcome) => outcomes.push(outcome),
    }).answer(ask(), { emit: () => undefined });
    await held.asked;
    expect(retriever.calls).toEqual([]);
    held.release();
    await answering;
    expect(outcomes).toEqual([]);
  });
});
