import { ValidationError } from '@hopline/contracts';
import { describe, expect, it } from 'vitest';
import { paragraphText, parseDataset } from '../src/index.js';
import { tinyDatasetLines } from './fixtures.js';

describe('dataset', () => {
  it('dataset - parses every line into camel-cased questions', () => {
    const questions = parseDataset(tinyDatasetLines().join('\n') + '\n', 'tiny.jsonl');
    expect(questions).toHaveLength(2);
    expect(questions[1]).toMatchObject({ id: 'q2', dataset: 'musique', answerAliases: ['bread'] });
    expect(questions[1]?.supporting[1]).toEqual({ title: 'Bakery', sentIds: [0], paragraphIndex: 2 });
  });

  it('dataset - a line that breaks the schema fails with its line number', () => {
    const lines = tinyDatasetLines();
    lines[1] = lines[1]!.replace('"musique"', '"squad"');
    expect(() => parseDataset(lines.join('\n'), 'tiny.jsonl')).toThrow(/tiny\.jsonl:2: dataset/);
    expect(() => parseDataset('{oops', 'bad.jsonl')).toThrow(ValidationError);
  });

  it('dataset - a supporting paragraph index past the paragraphs is rejected', () => {
    const line = JSON.parse(tinyDatasetLines()[0]!) as { supporting: Array<{ paragraph_index: number }> };
    line.supporting[0]!.paragraph_index = 9;
    expect(() => parseDataset(JSON.stringify(line), 'x')).toThrow(/points past the 2 paragraphs/);
  });

  it('dataset - paragraph text joins HotpotQA and 2Wiki sentences with exactly one space', () => {
    expect(paragraphText({ title: 't', sentences: ['First.', ' Second.'] })).toBe('First. Second.');
    expect(paragraphText({ title: 't', sentences: ['First.', 'Second.'] })).toBe('First. Second.');
  });
});
