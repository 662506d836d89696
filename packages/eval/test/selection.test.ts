import { describe, expect, it } from 'vitest';
import type { EvalQuestion } from '../src/index.js';
import { foldCounts, foldOf, selectQuestions } from '../src/index.js';

const question = (id: string, dataset = 'hotpotqa'): EvalQuestion => ({
  id,
  dataset,
  question: `question ${id}?`,
  answers: ['x'],
  goldDocIds: ['d'],
  hopOrdered: false,
  answerable: true,
  apart: '',
});

const many = Array.from({ length: 400 }, (_, index) => question(`q${index}`, index % 2 === 0 ? 'a' : 'b'));

describe('selection', () => {
  it('split - a question keeps its half whatever comes with it: the parity of the SHA-256 of its id', () => {
    // SHA-256 of "q0" starts 341c0a3e (even), of "q1" c75de8c1 (odd): the rule the README documents.
    expect(foldOf('q0')).toBe('tune');
    expect(foldOf('q1')).toBe('check');
    const reversed = selectQuestions([...many].reverse(), { split: 'tune' }).map((q) => q.id);
    expect(new Set(reversed)).toEqual(new Set(selectQuestions(many, { split: 'tune' }).map((q) => q.id)));
  });

  it('split - tune and check partition the questions about half and half per data set', () => {
    const tune = selectQuestions(many, { split: 'tune' });
    const check = selectQuestions(many, { split: 'check' });
    expect(tune.length + check.length).toBe(many.length);
    expect(tune.filter((q) => check.includes(q))).toEqual([]);
    for (const counts of Object.values(foldCounts(many))) {
      expect(counts.tune).toBeGreaterThan(80);
      expect(counts.check).toBeGreaterThan(80);
    }
    expect(selectQuestions(many, { split: 'all' })).toHaveLength(400);
  });

  it('selection - limit takes the first questions of the split, ids replays named ones and refuses unknown ids', () => {
    const tune = selectQuestions(many, { split: 'tune' });
    expect(selectQuestions(many, { split: 'tune', limit: 3 })).toEqual(tune.slice(0, 3));
    expect(selectQuestions(many, { split: 'all', ids: ['q7', 'q2'] }).map((q) => q.id)).toEqual(['q2', 'q7']);
    expect(() => selectQuestions(many, { split: 'all', ids: ['nope'] })).toThrow(/no question has the id nope/);
  });
});
