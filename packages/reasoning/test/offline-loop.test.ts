import { getEventListeners } from 'node:events';
import { Grade, Route, StopReason, ValidationError } from '@hopline/contracts';
import { describe, expect, it } from 'vitest';
import type { RetrieverPort } from '../src/index.js';
import { createHopReasoner } from '../src/index.js';
import { chunk } from './support/chunks.js';
import {
  analysis,
  ask,
  BRIDGE_QUESTION,
  corpus,
  eventLog,
  fixedAnalyzer,
  keepOrder,
  overlapRetriever,
  shape,
} from './support/fixtures.js';

function reasonerWith(overrides: Partial<Parameters<typeof createHopReasoner>[0]> = {}) {
  return createHopReasoner({
    analyzer: fixedAnalyzer(),
    retriever: overlapRetriever(),
    reranker: keepOrder,
    config: { topK: 4 },
    ...overrides,
  });
}

describe('hop loop (offline) - a complete chain', () => {
  it('hop loop - follows the bridge entity to the answer and stops SUFFICIENT', async () => {
    const log = eventLog();
    const { done } = await reasonerWith().answer(ask(), { emit: log.emit });
    expect(done).toMatchObject({
      stopReason: StopReason.SUFFICIENT,
      hops: 2,
      abstained: false,
      route: Route.ITERATIVE,
      llmCalls: 0,
      tokens: 0,
    });
    expect(done.answer).toMatch(/^Tobias Wrenfield \[\d\]\./);
    const [first, second] = log.of('hopAnswer').map((event) => event.hopAnswer);
    expect(first).toMatchObject({ hop: 1, answer: 'Mirela Dunstan', done: false });
    expect(first?.nextQuery).toContain('Mirela Dunstan');
    expect(second).toMatchObject({
      hop: 2,
      query: first?.nextQuery,
      answer: 'Tobias Wrenfield',
      done: true,
      unknown: false,
    });
  });

  it('hop loop - sends route, then hop_started, retrieval, hop_answer per hop, then tokens, citations and done', async () => {
    const log = eventLog();
    await reasonerWith().answer(ask(), { emit: log.emit });
    expect(shape(log.kinds())).toEqual([
      'route',
      'hopStarted',
      'retrieval',
      'hopAnswer',
      'hopStarted',
      'retrieval',
      'hopAnswer',
      'token',
      'citations',
      'done',
    ]);
    expect(
      log
        .of('token')
        .map((event) => event.token.text)
        .join(''),
    ).toBe(log.of('done')[0]?.done.answer);
    expect(new Set(log.events.map((event) => event.questionId))).toEqual(new Set(['q-1']));
  });

  it('hop loop - every [n] of the answer resolves to a citation of a retrieved chunk, which names its hop and the bridge that led there', async () => {
    const { done } = await reasonerWith().answer(ask(), { emit: () => undefined });
    const cited = [...done.answer.matchAll(/\[(\d+)\]/g)].map((match) => Number(match[1]));
    expect(cited.length).toBeGreaterThan(0);
    const byIndex = new Map(done.citations.map((citation) => [citation.index, citation]));
    for (const index of cited) expect(byIndex.has(index)).toBe(true);
    for (const citation of done.citations) expect(corpus.map((chunk) => chunk.chunkId)).toContain(citation.chunkId);
    const star = done.citations.find((citation) => citation.chunkId === 'star');
    expect(star).toMatchObject({ hop: 2, bridgeEntity: 'Mirela Dunstan', title: 'Mirela Dunstan', docId: 'doc-star' });
    expect(done.citations.find((citation) => citation.chunkId === 'film')).toMatchObject({ hop: 1, bridgeEntity: '' });
  });

  it("hop loop - a bridge's own document cited by an earlier hop beside its evidence names the hop sent for that bridge", async () => {
    const small = corpus.filter((chunk) => ['film', 'star', 'son'].includes(chunk.chunkId));
    const everything: RetrieverPort = {
      retrieve: async (input) => ({
        chunks: small.map((chunk) => ({ ...chunk, hop: input.hop })),
        degraded: false,
        degradedReasons: [],
      }),
    };
    const log = eventLog();
    const { done } = await reasonerWith({ retriever: everything }).answer(ask(), { emit: log.emit });
    // Hop 1 cites the star's document beside the film's; hop 2 was sent for her.
    expect(log.of('hopAnswer')[0]?.hopAnswer.citedChunkIds).toContain('star');
    expect(done.citations.find((citation) => citation.chunkId === 'star')).toMatchObject({
      hop: 2,
      bridgeEntity: 'Mirela Dunstan',
    });
    expect(done.citations.find((citation) => citation.chunkId === 'film')).toMatchObject({ hop: 1, bridgeEntity: '' });
  });

  it('hop loop - the first hop retrieves 1.5 × top-k, later hops top-k', async () => {
    const retriever = overlapRetriever();
    await reasonerWith({ retriever, config: { topK: 4 } }).answer(ask(), { emit: () => undefined });
    expect(retriever.calls.map((call) => call.topK)).toEqual([6, 4]);
    expect(retriever.calls.map((call) => call.hop)).toEqual([1, 2]);
  });

  it("hop loop - grades each hop's evidence on the retrieval and hop_answer events", async () => {
    const log = eventLog();
    await reasonerWith().answer(ask(), { emit: log.emit });
    for (const event of log.of('retrieval')) expect([Grade.RELEVANT, Grade.AMBIGUOUS]).toContain(event.retrieval.grade);
    expect(log.of('hopAnswer').map((event) => event.hopAnswer.grade)).toEqual(
      log.of('retrieval').map((event) => event.retrieval.grade),
    );
  });

  it("hop loop - the trace records each hop's query, evidence and answer, the final answer and evidence, and the timings", async () => {
    const { done, trace } = await reasonerWith().answer(ask(), { emit: () => undefined });
    expect(trace).toMatchObject({
      questionId: 'q-1',
      question: BRIDGE_QUESTION,
      stopReason: StopReason.SUFFICIENT,
      llmCalls: 0,
      abstained: false,
    });
    expect(trace.answer).toBe(done.answer);
    expect(trace.answer).toContain('Tobias Wrenfield');
    expect(trace.hops.map((hop) => hop.hop)).toEqual([1, 2]);
    expect(trace.hops[1]?.evidenceChunkIds).toContain('star');
    expect(trace.hops[1]?.answer?.answer).toBe('Tobias Wrenfield');
    expect(trace.finalEvidenceChunkIds.slice(0, 2)).toEqual(['film', 'star']);
    expect(trace.analysis?.route).toBe(Route.ITERATIVE);
    expect(done.timings?.totalMs).toBeGreaterThanOrEqual(done.timings?.retrieveMs ?? 0);
  });
});

describe('hop loop (offline) - every stop reason', () => {
  it('hop loop - UNKNOWN: when no document mentions the bridge entity the chain stops and the answer abstains, saying what was found and what was not', async () => {
    const withoutStar = corpus.filter((chunk) => chunk.chunkId !== 'star' && chunk.chunkId !== 'son');
    const { done } = await reasonerWith({ retriever: overlapRetriever(withoutStar) }).answer(ask(), {
      emit: () => undefined,
    });
    expect(done).toMatchObject({ stopReason: StopReason.UNKNOWN, abstained: true, hops: 2 });
    expect(done.answer).toMatch(/^I cannot answer/);
    expect(done.answer).toMatch(/What was found: .*Mirela Dunstan.*\[1\]/);
    expect(done.answer).toMatch(/What was not found: .*Mirela Dunstan/);
  });

  it('hop loop - NO_NEW_EVIDENCE: a hop that finds nothing the question had not seen ends the chain', async () => {
    // The first hop already retrieves both documents there are, so the second cannot add one.
    const married = chunk(
      'star',
      'Mirela Dunstan',
      'Mirela Dunstan, the star of No Harbour, married Tobias Wrenfield in 1954.',
    );
    const small = [corpus.find((item) => item.chunkId === 'film')!, married];
    // Three hops expected: after the second the chain would go on, but there is nothing new to find.
    const reasoner = reasonerWith({
      retriever: overlapRetriever(small),
      analyzer: fixedAnalyzer(analysis({ complexity: 3 })),
    });
    const { done } = await reasoner.answer(ask(), { emit: () => undefined });
    expect(done.stopReason).toBe(StopReason.NO_NEW_EVIDENCE);
    expect(done.abstained).toBe(true);
  });

  it('hop loop - asks for more than five hops are held to the hard cap of five', async () => {
    const log = eventLog();
    await reasonerWith().answer(ask(BRIDGE_QUESTION, { maxHops: 9 }), { emit: log.emit });
    expect(log.of('hopStarted')[0]?.hopStarted.maxHops).toBe(5);
  });

  it("hop loop - DEADLINE: a retrieval still running at the question's deadline ends the question, with an answer that abstains", async () => {
    const started = Date.now();
    const retriever = overlapRetriever(corpus, { slow: (query) => query.includes('Mirela Dunstan') });
    const { done } = await reasonerWith({ retriever }).answer(ask(BRIDGE_QUESTION, { deadlineMs: 300 }), {
      emit: () => undefined,
    });
    expect(done.stopReason).toBe(StopReason.DEADLINE);
    expect(done.abstained).toBe(true);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('hop loop - CANCELLED: once the asker is gone no further hop starts and no token is sent', async () => {
    const controller = new AbortController();
    const log = eventLog();
    const emit = (event: Parameters<typeof log.emit>[0]) => {
      log.emit(event);
      if (event.event === 'hopAnswer') controller.abort();
    };
    const { done } = await reasonerWith().answer(ask(), { emit, signal: controller.signal });
    expect(done).toMatchObject({ stopReason: StopReason.CANCELLED, hops: 1, answer: '', abstained: false });
    expect(log.of('token')).toHaveLength(0);
    expect(log.of('hopStarted')).toHaveLength(1);
  });
});

describe('hop loop (offline) - parallel plans', () => {
  const choice = 'Which film came out first, How To Lose Nothing or Sela Vanu?';
  const parallel = analysis({
    route: Route.PARALLEL,
    complexity: 2,
    subQuestions: [
      { id: 'q1', text: 'Which film came out first, How To Lose Nothing?', dependsOn: [] },
      { id: 'q2', text: 'Which film came out first, Sela Vanu?', dependsOn: [] },
    ],
  });

  it('hop loop - sub-questions fan out at once and their evidence merges; stop reason NOT_ITERATIVE', async () => {
    const { done, trace } = await reasonerWith({ analyzer: fixedAnalyzer(parallel) }).answer(ask(choice), {
      emit: () => undefined,
    });
    expect(done).toMatchObject({
      stopReason: StopReason.NOT_ITERATIVE,
      route: Route.PARALLEL,
      hops: 2,
      abstained: false,
    });
    expect(trace.finalEvidenceChunkIds.slice(0, 2).sort()).toEqual(['avoid', 'vanu']);
    // Each sub-question reads its film's date, the value the comparison turns on; the earlier one
    // is the answer, and the answer cites the chunk stating each date.
    expect(trace.hops.map((hop) => hop.answer?.answer).sort()).toEqual(['1992', '2009']);
    expect(done.answer).toMatch(/^Sela Vanu \[(\d)\]: 1992 \[\1\], before How To Lose Nothing, 2009 \[\d\]\./);
  });

  it('hop loop - a choice asked with its verb first ("Was A or B released first?") reads each option\'s date, not a yes or no', async () => {
    const verbFirst = analysis({
      route: Route.PARALLEL,
      complexity: 2,
      subQuestions: [
        { id: 'q1', text: 'Was How To Lose Nothing released first?', dependsOn: [] },
        { id: 'q2', text: 'Was Sela Vanu released first?', dependsOn: [] },
      ],
    });
    const { done, trace } = await reasonerWith({ analyzer: fixedAnalyzer(verbFirst) }).answer(
      ask('Was How To Lose Nothing or Sela Vanu released first?'),
      { emit: () => undefined },
    );
    expect(trace.hops.map((hop) => hop.answer?.answer).sort()).toEqual(['1992', '2009']);
    expect(done.abstained).toBe(false);
    expect(done.answer).toMatch(/^Sela Vanu \[\d\]: 1992/);
  });

  it('hop loop - a sub-question that times out degrades the answer to an abstention that says what is missing, instead of failing the question', async () => {
    const retriever = overlapRetriever(corpus, { slow: (query) => query.includes('Sela Vanu') });
    const started = Date.now();
    const reasoner = reasonerWith({
      analyzer: fixedAnalyzer(parallel),
      retriever,
      config: { topK: 4, layerDeadlineShare: 0.1 },
    });
    const { done } = await reasoner.answer(ask(choice, { deadlineMs: 3_000 }), { emit: () => undefined });
    expect(Date.now() - started).toBeLessThan(2_500);
    expect(done.degraded).toBe(true);
    expect(done.degradedReasons.join(' ')).toMatch(/q2/);
    // A comparison with one side unknown has nothing to compare: what was found is cited, the rest named.
    expect(done.abstained).toBe(true);
    expect(done.answer).toMatch(/What was not found: .*Sela Vanu/);
    expect(done.citations.map((citation) => citation.chunkId)).toContain('avoid');
  });

  it('hop loop - a wide plan hangs one abort listener per sub-question on the question, and none once answered', async () => {
    // Each retrieval listens on its signal twice (a BM25 and a vector guard, as the hybrid
    // retriever does) and waits until every sub-question is in flight: with one signal shared by
    // the layer, eight sub-questions would hang sixteen listeners on it at once.
    const width = 8;
    const inner = overlapRetriever();
    let inFlight = 0;
    let allInFlight: () => void = () => undefined;
    const everyoneIn = new Promise<void>((resolve) => (allInFlight = resolve));
    const mostListeners = { count: 0 };
    const caller = new AbortController();
    const retriever: RetrieverPort = {
      async retrieve(input, ctx) {
        const listeners = [() => undefined, () => undefined];
        for (const listener of listeners) ctx.signal.addEventListener('abort', listener);
        mostListeners.count = Math.max(mostListeners.count, getEventListeners(ctx.signal, 'abort').length);
        inFlight += 1;
        if (inFlight === width) allInFlight();
        await everyoneIn;
        for (const listener of listeners) ctx.signal.removeEventListener('abort', listener);
        return inner.retrieve(input, ctx);
      },
    };
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on('warning', onWarning);
    const plan = analysis({
      route: Route.PARALLEL,
      subQuestions: Array.from({ length: width }, (_, index) => ({
        id: `q${index + 1}`,
        text: `When did film number ${index + 1} come out?`,
        dependsOn: [],
      })),
    });
    try {
      await reasonerWith({ analyzer: fixedAnalyzer(plan), retriever }).answer(ask(), {
        emit: () => undefined,
        signal: caller.signal,
      });
    } finally {
      process.off('warning', onWarning);
    }
    expect(inFlight).toBe(width);
    expect(mostListeners.count).toBeLessThanOrEqual(3);
    expect(warnings).not.toContain('MaxListenersExceededWarning');
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
  });

  it("hop loop - a dependent sub-question runs after its dependency with the dependency's answer filled in", async () => {
    const plan = analysis({
      route: Route.PARALLEL,
      complexity: 2,
      subQuestions: [
        { id: 'q1', text: 'the star of No Harbour', dependsOn: [] },
        { id: 'q2', text: '#q1 married', dependsOn: ['q1'] },
      ],
    });
    const log = eventLog();
    const { done } = await reasonerWith({ analyzer: fixedAnalyzer(plan) }).answer(ask(BRIDGE_QUESTION), {
      emit: log.emit,
    });
    const started = log.of('hopStarted').map((event) => event.hopStarted.subQuestion);
    expect(started[0]).toBe('the star of No Harbour');
    expect(started[1]).toMatch(/^Mirela Dunstan .*married$/);
    expect(done.citations.map((citation) => citation.chunkId)).toContain('star');
  });
});

describe('hop loop - input', () => {
  it('hop loop - an ask without a request context or with an empty question is a ValidationError', async () => {
    const reasoner = reasonerWith();
    await expect(reasoner.answer({ ...ask(), ctx: null }, { emit: () => undefined })).rejects.toBeInstanceOf(
      ValidationError,
    );
    await expect(reasoner.answer(ask('   '), { emit: () => undefined })).rejects.toBeInstanceOf(ValidationError);
  });

  it('hop loop - an analyzer that fails degrades to one hop that may extend, marked FALLBACK', async () => {
    const analyzer = { analyze: async () => Promise.reject(new Error('query-understanding is down')) };
    const { done, trace } = await reasonerWith({ analyzer }).answer(ask(), { emit: () => undefined });
    expect(trace.analysis).toMatchObject({ route: Route.SINGLE, decidedBy: 'FALLBACK' });
    expect(done.degradedReasons[0]).toMatch(/analysis failed/);
    expect(done.hops).toBeGreaterThanOrEqual(1);
  });

  it('hop loop - a reranker that fails leaves the fused order standing, flagged on the retrieval event', async () => {
    const reranker = { rerank: async () => Promise.reject(new Error('reranker is down')) };
    const log = eventLog();
    const { done } = await reasonerWith({ reranker }).answer(ask(), { emit: log.emit });
    expect(done.stopReason).toBe(StopReason.SUFFICIENT);
    expect(log.of('retrieval').every((event) => event.retrieval.rerankFallback)).toBe(true);
    expect(done.degraded).toBe(true);
  });
});
