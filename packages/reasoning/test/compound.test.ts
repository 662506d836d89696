import { Route } from '@hopline/contracts';
import { describe, expect, it } from 'vitest';
import type { ReasoningSwitch } from '../src/index.js';
import { analyzeByRules, createAnalyzer, createHopReasoner } from '../src/index.js';
import { compoundParts } from '../src/offline/compound.js';
import { chunk } from './support/chunks.js';
import { ask, keepOrder, overlapRetriever } from './support/fixtures.js';

// Invented documents: a project, its owner (whose document names her department), her company.
const corpus = [
  chunk('c-lumen', 'Project Lumen', 'Project Lumen is a forecasting service. The project is owned by Ilse Brandt.'),
  chunk(
    'c-brandt',
    'Ilse Brandt',
    'Ilse Brandt is a principal analyst in the Forecasting department of Kestrel Works. She joined in 2029.',
  ),
  chunk('c-kestrel', 'Kestrel Works', 'Kestrel Works is a shipping company founded in 2001 in Tallmoor.'),
];

const QUESTION = 'Who owns Project Lumen and which department is that person in?';

function answerOf(question: string, switchedOff: ReasoningSwitch[] = []) {
  const analyzer = createAnalyzer({ switchedOff });
  return createHopReasoner({
    analyzer: { analyze: (text, ctx) => analyzer.analyze(text, ctx) },
    retriever: overlapRetriever(corpus),
    reranker: keepOrder,
    config: { topK: 3, switchedOff },
  }).answer(ask(question), { emit: () => undefined });
}

describe("compound questions - two questions in one, the second about the first one's answer", () => {
  it('compound - splits at "and" before a question word, the back-reference in the second part standing for the first answer', () => {
    expect(compoundParts(QUESTION, '#q1.answer')).toEqual({
      first: 'Who owns Project Lumen?',
      second: 'which department is #q1.answer in?',
    });
    expect(compoundParts('Who coaches the Harbour Kites, and when did he start?', 'X')).toEqual({
      first: 'Who coaches the Harbour Kites?',
      second: 'when did X start?',
    });
    // A first part that asks who a description is: the second keeps the description beside the answer.
    expect(compoundParts('Who is the coach of the Harbour Kites and when did he start?', 'X')).toEqual({
      first: 'Who is the coach of the Harbour Kites?',
      second: 'when did X, the coach of the Harbour Kites, start?',
    });
  });

  it('compound - not a compound: one predicate asked two ways, a second part with no back-reference, one question', () => {
    expect(compoundParts('Which year and which league was the tenth season of the Kites?', 'X')).toBeUndefined();
    expect(compoundParts('Who owns Project Lumen and which company makes Frost Rings?', 'X')).toBeUndefined();
    expect(compoundParts('Which department does Ilse Brandt work in?', 'X')).toBeUndefined();
  });

  it('compound - the rules plan it as two steps, the second depending on the first', () => {
    const analysis = analyzeByRules(QUESTION);
    expect(analysis.route).toBe(Route.PARALLEL);
    expect(analysis.subQuestions).toEqual([
      { id: 'q1', text: 'Who owns Project Lumen?', dependsOn: [] },
      { id: 'q2', text: 'which department is #q1.answer in?', dependsOn: ['q1'] },
    ]);
  });

  it('compound - the answer gives both parts, each cited to a chunk that states it', async () => {
    const { done, trace } = await answerOf(QUESTION);
    expect(done.abstained).toBe(false);
    expect(done.answer).toMatch(/^Ilse Brandt \[(\d)\]; Forecasting \[(\d)\]\./);
    // The second step asked about the first one's answer alone, not its runners-up.
    expect(trace.hops.map((hop) => hop.query)).toContain('which department is Ilse Brandt in?');
    const [, first, second] = /^Ilse Brandt \[(\d)\]; Forecasting \[(\d)\]/.exec(done.answer) ?? [];
    const cited = (index: string | undefined) => done.citations.find((citation) => String(citation.index) === index);
    expect(cited(first)?.chunkId).toBe('c-lumen');
    expect(cited(second)?.chunkId).toBe('c-brandt');
  });

  it('compound - switched off, the question is not answered with both parts', async () => {
    const { done } = await answerOf(QUESTION, ['compoundQuestions']);
    expect(done.answer).not.toMatch(/^Ilse Brandt \[\d\]; Forecasting/);
  });
});

describe('kind names - a later hop asking "which <kind>" of one entity reads the name its document calls that kind', () => {
  it("kind names - switched off, the department is read as another name of the owner's document", async () => {
    const { done } = await answerOf(QUESTION, ['kindNames']);
    expect(done.answer).toMatch(/^Ilse Brandt \[\d\]; Kestrel Works \[\d\]/);
  });
});
