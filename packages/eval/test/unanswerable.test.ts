import { describe, expect, it } from 'vitest';
import type { EvalQuestion, QuestionOutcome } from '../src/index.js';
import { chooseUnanswerable, multihopMode, parseMultihopFile, runEval } from '../src/index.js';
import { tinyDatasetLines } from './fixtures.js';

const question = (id: string, overrides: Partial<EvalQuestion> = {}): EvalQuestion => ({
  id,
  dataset: 'hotpotqa',
  question: `${id}?`,
  answers: ['x'],
  goldDocIds: [`${id}-a`, `${id}-b`],
  hopOrdered: false,
  answerable: true,
  apart: '',
  ...overrides,
});

describe('unanswerable copies', () => {
  it('unanswerable - the choice depends on the ids alone, skips questions set apart or unanswerable, and removes the last gold document when none states the answer', () => {
    const questions = [
      ...Array.from({ length: 20 }, (_, index) => question(`q${index}`)),
      question('apart', { apart: 'bare gold' }),
      question('none', { answerable: false, goldDocIds: [] }),
    ];
    const chosen = chooseUnanswerable(questions, 5, new Map());
    expect(chosen).toHaveLength(5);
    expect(chooseUnanswerable([...questions].reverse(), 5, new Map())).toEqual(chosen);
    for (const { question: picked, removedDocId } of chosen) {
      expect(['apart', 'none']).not.toContain(picked.id);
      expect(removedDocId).toBe(`${picked.id}-b`);
    }
    expect(chooseUnanswerable(questions, 100, new Map())).toHaveLength(20);
  });

  it('unanswerable - the gold document that states the answer is the one removed, unless the gold documents are in hop order', () => {
    const document = (docId: string, text: string) => ({ docId, title: docId, text, effectiveDate: '' });
    const documents = new Map(
      [
        // The bridge's document names the answer; the answer's own document comes last.
        document('zien', 'Chip Zien starred in "Into the Woods" by Stephen Sondheim.'),
        document('sondheim', 'Sondheim was an American composer and lyricist.'),
        document('bridge', 'The bridge leads to the answer.'),
        document('answer', 'The answer is Ada Moss.'),
      ].map((entry) => [entry.docId, entry]),
    );
    const composer = question('composer', { answers: ['Stephen Sondheim'], goldDocIds: ['zien', 'sondheim'] });
    const [picked] = chooseUnanswerable([composer], 1, documents);
    expect(picked?.removedDocId).toBe('zien');
    const ordered = question('ordered', {
      answers: ['Stephen Sondheim'],
      goldDocIds: ['zien', 'sondheim'],
      hopOrdered: true,
    });
    expect(chooseUnanswerable([ordered], 1, documents)[0]?.removedDocId).toBe('sondheim');
    const judgement = question('judgement', { answers: ['yes'], goldDocIds: ['bridge', 'answer'] });
    expect(chooseUnanswerable([judgement], 1, documents)[0]?.removedDocId).toBe('answer');
  });

  it('unanswerable - a question asked over the copy never sees the removed document, and the whole corpus is untouched', async () => {
    const set = parseMultihopFile(tinyDatasetLines().join('\n'), 'tiny.jsonl');
    const outcomes: QuestionOutcome[] = [];
    const report = await runEval(set, set.questions, {
      mode: multihopMode,
      k: 5,
      unanswerable: 2,
      onOutcome: (outcome) => {
        outcomes.push(outcome);
      },
    });
    expect(report.unanswerable).toBe(2);
    for (const outcome of outcomes) {
      const copy = outcome.withoutGold;
      expect(outcome.question.goldDocIds).toContain(copy?.removedDocId);
      const loop = copy?.runs['multi-hop'];
      const seen = [...(loop?.rankedDocIds ?? []), ...(loop?.answered?.hops.flatMap((hop) => hop.docIds) ?? [])];
      expect(seen.length).toBeGreaterThan(0);
      expect(seen).not.toContain(copy?.removedDocId);
      // Only the answering systems are asked over the copy.
      expect(Object.keys(copy?.runs ?? {})).toEqual(['single-shot', 'multi-hop']);
    }
    // Over the whole corpus the retrieval baselines still find the gold paragraphs.
    expect(report.overall.systems.bm25?.supportRecall).toBeGreaterThan(0);
    expect(
      outcomes.some((outcome) => outcome.runs.bm25?.rankedDocIds.includes(outcome.withoutGold!.removedDocId)),
    ).toBe(true);
  });
});
