import { describe, expect, it } from 'vitest';
import type { AnswerTrace, EvalQuestion, QuestionOutcome, SystemRun } from '../src/index.js';
import { hopPath, percentile, scoreRetrieval, summarizeOutcomes } from '../src/index.js';

const question = (id: string, overrides: Partial<EvalQuestion> = {}): EvalQuestion => ({
  id,
  dataset: 'hotpotqa',
  question: `${id}?`,
  answers: ['gold'],
  goldDocIds: ['a', 'b'],
  hopOrdered: false,
  answerable: true,
  apart: '',
  ...overrides,
});

const answered = (overrides: Partial<AnswerTrace> = {}): AnswerTrace => ({
  route: 'ITERATIVE',
  stopReason: 'SUFFICIENT',
  hops: [],
  subQuestions: 0,
  text: '',
  answer: 'gold',
  abstained: false,
  claims: { checked: 0, supported: 0 },
  ...overrides,
});

const run = (rankedDocIds: string[], overrides: Partial<SystemRun> = {}): SystemRun => ({
  rankedDocIds,
  latencyMs: 1,
  retrievalCalls: 1,
  llmCalls: 0,
  tokens: 0,
  ...overrides,
});

const hop = (n: number, docIds: string[], unknown = false) => ({
  hop: n,
  query: `query ${n}`,
  docIds,
  answer: unknown ? '' : `answer ${n}`,
  unknown,
});

describe('retrieval metrics', () => {
  it('metrics - a document counts as found when any of its chunks is in the top k; MRR reads the first gold chunk', () => {
    expect(scoreRetrieval(['a', 'b'], ['x', 'a', 'a', 'b'], 4)).toEqual({
      gold: 2,
      found: 2,
      chainComplete: true,
      reciprocalRank: 0.5,
    });
    expect(scoreRetrieval(['a', 'b'], ['x', 'y', 'a', 'b'], 2)).toEqual({
      gold: 2,
      found: 0,
      chainComplete: false,
      reciprocalRank: 0,
    });
  });

  it('metrics - percentiles interpolate between ranks', () => {
    expect(percentile([4, 1, 3, 2], 50)).toBe(2.5);
    expect(percentile([1, 2, 3, 4, 5], 95)).toBeCloseTo(4.8, 10);
    expect(percentile([], 50)).toBeNaN();
  });

  it('per-hop - in hop order, hop n holds when it retrieved gold document n; the break point is the first that did not', () => {
    expect(hopPath(['a', 'b', 'c'], true, [['a'], ['b', 'x'], ['c']])).toEqual({
      held: [true, true, true],
      breakPoint: 0,
    });
    // Hop 1 found both; hop 2 went elsewhere: the chain broke at hop 2 although b was found.
    expect(hopPath(['a', 'b'], true, [['a', 'b'], ['x']])).toEqual({ held: [true, false], breakPoint: 2 });
    expect(hopPath(['a', 'b', 'c'], true, [['a']])).toEqual({ held: [true, false, false], breakPoint: 2 });
  });

  it('per-hop - without a hop order, hop n holds when hops 1..n together retrieved n gold documents, though fewer hops ran', () => {
    expect(hopPath(['a', 'b'], false, [['b', 'a']])).toEqual({ held: [true, true], breakPoint: 0 });
    expect(hopPath(['a', 'b', 'c'], false, [['x'], ['a', 'b'], ['y']])).toEqual({
      held: [false, true, false],
      breakPoint: 1,
    });
  });
});

describe('summaries', () => {
  it('summary - chain recall per question, support recall per gold document, MRR, per data set and overall', () => {
    const { overall, byGroup } = summarizeOutcomes(
      [
        { question: question('1'), runs: { bm25: run(['a', 'b']) } },
        { question: question('2', { goldDocIds: ['c', 'd'] }), runs: { bm25: run(['x', 'c']) } },
        { question: question('3', { dataset: 'musique', goldDocIds: ['e', 'f', 'g', 'h'] }), runs: { bm25: run([]) } },
      ],
      10,
    );
    expect(overall.systems.bm25).toMatchObject({ questions: 3, chainRecall: 33.3, supportRecall: 37.5, mrr: 0.5 });
    expect(byGroup.hotpotqa?.systems.bm25).toMatchObject({
      questions: 2,
      chainRecall: 50,
      supportRecall: 75,
      mrr: 0.75,
    });
    expect(byGroup.musique?.systems.bm25).toMatchObject({ questions: 1, chainRecall: 0 });
  });

  it('summary - questions set apart get their own group and stay out of the overall figures', () => {
    const { overall, byGroup } = summarizeOutcomes(
      [
        { question: question('1', { dataset: 'chronoqa' }), runs: { bm25: run(['a', 'b']) } },
        { question: question('2', { dataset: 'chronoqa', apart: 'bare gold' }), runs: { bm25: run(['x']) } },
      ],
      10,
    );
    expect(Object.keys(byGroup)).toEqual(['chronoqa', 'chronoqa (bare gold)']);
    expect(overall).toMatchObject({ questions: 1, systems: { bm25: { chainRecall: 100 } } });
  });

  it('summary - answers, yes/no judgements, citation support, per-hop recall, break points and sub-question coverage', () => {
    const outcomes: QuestionOutcome[] = [
      {
        question: question('1', { question: 'Which opened first, the mill or the bridge?', goldDocIds: ['a', 'b'] }),
        runs: {
          'multi-hop': run(['a', 'b'], {
            retrievalCalls: 2,
            answered: answered({
              hops: [hop(1, ['a']), hop(2, ['b'])],
              claims: { checked: 3, supported: 2 },
            }),
          }),
        },
      },
      {
        question: question('2', { dataset: 'chronoqa', answers: ['是的'], goldDocIds: ['c', 'd'] }),
        runs: {
          'multi-hop': run(['c'], {
            retrievalCalls: 2,
            answered: answered({
              route: 'PARALLEL',
              stopReason: 'NOT_ITERATIVE',
              answer: '不是',
              subQuestions: 2,
              hops: [hop(1, ['c']), hop(2, ['x'], true)],
              claims: { checked: 1, supported: 1 },
            }),
          }),
        },
      },
    ];
    const summary = summarizeOutcomes(outcomes, 10).overall.systems['multi-hop'];
    expect(summary).toMatchObject({
      chainRecall: 50,
      retrievalCalls: 2,
      answers: {
        questions: 2,
        em: 50,
        f1: 50,
        judgements: { questions: 1, right: 0 },
        named: { questions: 1, right: 100 },
        ordered: { questions: 1, right: 100 },
        answered: 100,
        citationSupport: { claims: 4, supported: 75 },
      },
      loop: {
        avgHops: 2,
        perHopRecall: [
          { questions: 2, recall: 100 },
          { questions: 2, recall: 50 },
        ],
        breakPoints: { intact: 1, '2': 1 },
        subQuestions: { questions: 1, coverage: 50 },
        stopReasons: { SUFFICIENT: 50, NOT_ITERATIVE: 50 },
        routes: { ITERATIVE: 50, PARALLEL: 50 },
      },
    });
  });

  it('summary - abstention recall on copies without a gold document, precision against the same questions over the whole corpus', () => {
    const abstains = (abstained: boolean) => ({ 'multi-hop': run([], { answered: answered({ abstained }) }) });
    const outcomes: QuestionOutcome[] = [
      { question: question('1'), runs: abstains(false), withoutGold: { removedDocId: 'b', runs: abstains(true) } },
      { question: question('2'), runs: abstains(true), withoutGold: { removedDocId: 'b', runs: abstains(true) } },
      { question: question('3'), runs: abstains(false), withoutGold: { removedDocId: 'b', runs: abstains(false) } },
      { question: question('4'), runs: abstains(true) },
      { question: question('5', { answerable: false, answers: [], goldDocIds: [] }), runs: abstains(true) },
    ];
    const { overall } = summarizeOutcomes(outcomes, 10);
    // Unanswerable: three copies and question 5, three of which abstained. Wrong abstentions among their
    // whole-corpus twins: question 2 (question 4 has no copy and is not counted).
    expect(overall.abstention?.['multi-hop']).toEqual({ unanswerable: 4, recall: 75, precision: 75 });
    expect(overall.systems['multi-hop']?.answers).toMatchObject({ questions: 4, answered: 50 });
  });
});
