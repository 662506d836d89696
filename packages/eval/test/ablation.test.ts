import { REASONING_SWITCH_NAMES } from '@hopline/reasoning';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EvalRetrievalStack, GroupSummary } from '../src/index.js';
import {
  formatAblation,
  ingestCorpus,
  multihopMode,
  openEvalRetrievalStack,
  parseMultihopFile,
  runEval,
  singleMode,
  switchDelta,
} from '../src/index.js';
import { tinyDatasetLines } from './fixtures.js';

const group = (
  chainRecall: number,
  f1: number,
  recall?: number,
  { yesNoRight = 50, answered = 100, precision = 100 } = {},
): GroupSummary => ({
  questions: 10,
  systems: {
    'multi-hop': {
      questions: 10,
      chainRecall,
      supportRecall: chainRecall,
      mrr: 1,
      latency: { p50Ms: 1, p95Ms: 1, meanMs: 1 },
      retrievalCalls: 2,
      llmCalls: 0,
      tokens: 0,
      answers: {
        questions: 10,
        em: f1,
        f1,
        judgements: { questions: 4, right: yesNoRight },
        named: { questions: 10, right: f1 },
        ordered: { questions: 0, right: 0 },
        answered,
        citationSupport: { claims: 0, supported: 0 },
      },
    },
  },
  ...(recall === undefined ? {} : { abstention: { 'multi-hop': { unanswerable: 5, recall, precision } } }),
});

describe('ablation', () => {
  const set = parseMultihopFile(tinyDatasetLines().join('\n'), 'tiny.jsonl');
  let stack: EvalRetrievalStack;
  // The seeds of every retrieval the loop asked the entity graph to walk from.
  const expansions: string[][] = [];

  beforeAll(async () => {
    stack = await openEvalRetrievalStack();
    await ingestCorpus(set.documents, stack.indexer);
    const retrieve = stack.retriever.retrieve.bind(stack.retriever);
    stack.retriever = {
      retrieve: (input) => {
        if (input.seeds?.length) expansions.push([...input.seeds]);
        return retrieve(input);
      },
    };
  });

  afterAll(async () => {
    await stack.close();
  });

  it("ablation - a switch's delta is the multi-hop figure with it off minus with everything on, per group", () => {
    const on = { overall: group(80, 40, 60), byGroup: { hotpotqa: group(90, 50, 70), musique: group(40, 10, 50) } };
    const off = { overall: group(85, 30, 40), byGroup: { hotpotqa: group(95, 50, 70), musique: group(40, 0, 20) } };
    const delta = switchDelta('entityGraph', on, off);
    expect(delta.overall).toEqual({
      chainRecall: 5,
      supportRecall: 5,
      em: -10,
      f1: -10,
      yesNoRight: 0,
      answered: 0,
      abstentionRecall: -20,
      abstentionPrecision: 0,
    });
    expect(delta.byGroup.musique).toEqual({
      chainRecall: 0,
      supportRecall: 0,
      em: -10,
      f1: -10,
      yesNoRight: 0,
      answered: 0,
      abstentionRecall: -30,
      abstentionPrecision: 0,
    });
    expect(delta.description).toMatch(/PageRank/);
  });

  it('ablation - a rule that changes judgements, abstentions or what is answered shows there though F1 stays', () => {
    // Switched off, a judgement rule answers fewer yes/no questions right and abstains where it answered.
    const on = { overall: group(80, 40, 60), byGroup: { chronoqa: group(80, 40, 60) } };
    const changed = { yesNoRight: 25, answered: 90, precision: 75 };
    const off = { overall: group(80, 40, 60, changed), byGroup: { chronoqa: group(80, 40, 60, changed) } };
    const delta = switchDelta('orderJudgements', on, off);
    expect(delta.overall).toMatchObject({ f1: 0, yesNoRight: -25, answered: -10, abstentionPrecision: -25 });
    const table = formatAblation({ orderJudgements: delta }, 10, 'all').join('\n');
    expect(table).toMatch(/yes\/no right[^\n]*\norderJudgements\s+-25\.0\s+-25\.0/);
    expect(table).toMatch(/answered[^\n]*\norderJudgements\s+-10\.0/);
    expect(table).toMatch(/abstention precision[^\n]*\norderJudgements\s+-25\.0/);
  });

  it('ablation - with a switch off the mode runs the loop alone, and the loop gets the switch', async () => {
    const question = set.questions[0]!;
    const context = { stack, k: 3, questionTimeoutMs: 10_000 };
    expansions.length = 0;
    const allOn = await multihopMode.open(context)(question);
    expect(Object.keys(allOn)).toEqual(['bm25', 'single-shot', 'multi-hop']);
    // All on, the loop's first hop expands through the graph from the question itself; off, nothing does.
    expect(expansions.some((seeds) => seeds.includes(question.question))).toBe(true);
    expansions.length = 0;
    const off = await multihopMode.open({ ...context, switchedOff: ['entityGraph'] })(question);
    expect(Object.keys(off)).toEqual(['multi-hop']);
    expect(expansions).toEqual([]);
  });

  it('ablation - the stack keeps the entity graph of what it indexed, as an embedded retrieval-worker does', () => {
    expect(stack.graph.size.chunks).toBe(set.documents.length);
    expect(stack.graph.size.entities).toBeGreaterThan(0);
  });

  it('ablation - runEval reports every switch, and refuses a mode that does not answer', async () => {
    const report = await runEval(set, set.questions, { mode: multihopMode, k: 3, ablate: true });
    expect(Object.keys(report.ablation ?? {})).toEqual(REASONING_SWITCH_NAMES);
    expect(report.ablation?.parallelPlans?.byGroup).toHaveProperty('hotpotqa');
    await expect(runEval(set, set.questions, { mode: singleMode, k: 3, ablate: true })).rejects.toThrow(
      /--ablate needs a mode that answers/,
    );
  });

  it('ablation - switches asked off stay off in every run, and the ablation switches each other one', async () => {
    const report = await runEval(set, set.questions, {
      mode: multihopMode,
      k: 3,
      ablate: true,
      switchedOff: ['entityGraph'],
    });
    expect(Object.keys(report.ablation ?? {})).toEqual(REASONING_SWITCH_NAMES.filter((name) => name !== 'entityGraph'));
  });
});
