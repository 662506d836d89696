import { describe, expect, it } from 'vitest';
import { chunkEntities, namedSpans, spanTokens } from '../src/index.js';

describe('names', () => {
  it("names - a chunk's entities are its title and the names it states, keyed as the reasoner compares names", () => {
    expect(chunkEntities('The Weekenders', 'Frankie Sandford joined "Paper Owls" in London.')).toEqual(
      expect.arrayContaining(['weekender', 'frankie sandford', 'paper owl', 'london']),
    );
    expect(chunkEntities('', '负责人是李明，隶属于数据平台部。')).toEqual(
      expect.arrayContaining(['李明', '数据 平台 部']),
    );
    expect(chunkEntities('', 'nothing here is named.')).toEqual([]);
  });

  it('names - the spans of a text read from its own tokens are found once and handed out frozen', () => {
    const text = 'Frankie Sandford of the Bank of England met "Paper Owls" in London.';
    const spans = namedSpans(text);
    expect(spans.map((span) => span.text)).toEqual([
      'Frankie Sandford',
      'Bank of England',
      'Paper Owls',
      'London',
      // Again, as a quoted title.
      'Paper Owls',
    ]);
    expect(namedSpans(text, spanTokens(text))).toBe(spans);
    expect(Object.isFrozen(spans) && spans.every((span) => Object.isFrozen(span))).toBe(true);
    // A question's reading (numbers open names) is remembered apart from the prose reading.
    expect(namedSpans('47 Lanterns', undefined, { numbersOpenNames: true }).map((span) => span.text)).toEqual([
      '47 Lanterns',
    ]);
    expect(namedSpans('47 Lanterns').map((span) => span.text)).toEqual(['Lanterns']);
    // Other tokens than the text's own are read afresh.
    const fewer = spanTokens(text).slice(0, 2);
    expect(namedSpans(text, fewer).map((span) => span.text)).toEqual(['Frankie Sandford', 'Paper Owls']);
  });
});
