import { describe, expect, it } from 'vitest';
import { chunkEntities, namedSpans, spanTokens } from '../src/index.js';

describe('names', () => {
  it("names - a chunk's entities are its title and the names it states, keyed as the reasoner compares names", () => {
    expect(chunkEntities('The Saturdays', 'Frankie Sandford joined "Girls Aloud" in London.')).toEqual(
      expect.arrayContaining(['saturday', 'frankie sandford', 'girl aloud', 'london']),
    );
    expect(chunkEntities('', '负责人是李明，隶属于数据平台部。')).toEqual(
      expect.arrayContaining(['李明', '数据 平台 部']),
    );
    expect(chunkEntities('', 'nothing here is named.')).toEqual([]);
  });

  it('names - the spans of a text read from its own tokens are found once and handed out frozen', () => {
    const text = 'Frankie Sandford of the Bank of England met "Girls Aloud" in London.';
    const spans = namedSpans(text);
    expect(spans.map((span) => span.text)).toEqual([
      'Frankie Sandford',
      'Bank of England',
      'Girls Aloud',
      'London',
      // Again, as a quoted title.
      'Girls Aloud',
    ]);
    expect(namedSpans(text, spanTokens(text))).toBe(spans);
    expect(Object.isFrozen(spans) && spans.every((span) => Object.isFrozen(span))).toBe(true);
    // A question's reading (numbers open names) is remembered apart from the prose reading.
    expect(namedSpans('101 Dalmatians', undefined, { numbersOpenNames: true }).map((span) => span.text)).toEqual([
      '101 Dalmatians',
    ]);
    expect(namedSpans('101 Dalmatians').map((span) => span.text)).toEqual(['Dalmatians']);
    // Other tokens than the text's own are read afresh.
    const fewer = spanTokens(text).slice(0, 2);
    expect(namedSpans(text, fewer).map((span) => span.text)).toEqual(['Frankie Sandford', 'Girls Aloud']);
  });
});
