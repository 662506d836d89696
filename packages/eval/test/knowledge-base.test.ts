import { describe, expect, it } from 'vitest';
import { buildKnowledgeBase, parseDataset } from '../src/index.js';
import { tinyDatasetLines } from './fixtures.js';

describe('buildKnowledgeBase', () => {
  const questions = parseDataset(tinyDatasetLines().join('\n'), 'tiny');

  it('kb - pools all paragraphs, identical ones (same title and text) once', () => {
    const kb = buildKnowledgeBase(questions);
    expect(kb.documents.map((doc) => doc.title).sort()).toEqual(['Bakery', 'Bakery', 'Keeper', 'Lighthouse']);
    expect(kb.documents.every((doc) => doc.tenantId === 'eval' && doc.kbId === 'multihop' && doc.version === 1)).toBe(
      true,
    );
  });

  it('kb - a shared paragraph has one document id in every question', () => {
    const kb = buildKnowledgeBase(questions);
    expect(kb.docIdOf(questions[0]!, 0)).toBe(kb.docIdOf(questions[1]!, 0));
    expect(kb.docIdOf(questions[1]!, 2)).not.toBe(kb.docIdOf(questions[1]!, 3));
  });

  it('kb - gold document ids follow the supporting paragraph indexes', () => {
    const kb = buildKnowledgeBase(questions);
    expect(kb.goldDocIds(questions[1]!)).toEqual([kb.docIdOf(questions[1]!, 1), kb.docIdOf(questions[1]!, 2)]);
    expect(() => kb.docIdOf(questions[0]!, 5)).toThrow(RangeError);
  });
});
