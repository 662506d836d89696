import { describe, expect, it } from 'vitest';
import { Bm25Index } from '../src/index.js';

const words = (text: string): string[] => text.split(/\s+/).filter(Boolean);

describe('Bm25Index', () => {
  it('bm25 - ranks the document with the rarer matching term first', () => {
    const index = new Bm25Index();
    index.add('t/kb', 'common', words('apple banana'));
    index.add('t/kb', 'rare', words('apple cherry'));
    index.add('t/kb', 'other', words('banana date'));
    const { hits } = index.search(['t/kb'], words('banana cherry'), 3);
    expect(hits[0]?.key).toBe('rare');
  });

  it('bm25 - matches the textbook BM25 score for a single document', () => {
    const index = new Bm25Index({ k1: 1.2, b: 0.5 });
    index.add('p', 'a', words('x x y'));
    index.add('p', 'b', words('y z'));
    const { hits } = index.search(['p'], ['x'], 1);
    const idf = Math.log(1 + (2 - 1 + 0.5) / (1 + 0.5));
    const avgdl = 2.5;
    const expected = (idf * 2 * 2.2) / (2 + 1.2 * (1 - 0.5 + (0.5 * 3) / avgdl));
    expect(hits[0]?.score).toBeCloseTo(expected, 5);
  });

  it('bm25 - scope filter hides other partitions, even when they match better', () => {
    const index = new Bm25Index();
    for (let i = 0; i < 100; i++) index.add('other/kb', `o${i}`, words('secret secret secret'));
    index.add('mine/kb', 'm1', words('secret plan'));
    const { hits } = index.search(['mine/kb'], ['secret'], 10);
    expect(hits.map((hit) => hit.key)).toEqual(['m1']);
    expect(hits[0]?.partition).toBe('mine/kb');
  });

  it('bm25 - a search over several partitions ranks as one index holding just them', () => {
    const split = new Bm25Index();
    split.add('a', 'd1', words('alpha beta'));
    split.add('b', 'd2', words('alpha gamma gamma'));
    const joined = new Bm25Index();
    joined.add('one', 'd1', words('alpha beta'));
    joined.add('one', 'd2', words('alpha gamma gamma'));
    const a = split.search(['a', 'b'], words('alpha gamma'), 2).hits;
    const b = joined.search(['one'], words('alpha gamma'), 2).hits;
    expect(a.map((hit) => [hit.key, hit.score])).toEqual(b.map((hit) => [hit.key, hit.score]));
  });

  it('bm25 - re-adding a key replaces the document', () => {
    const index = new Bm25Index();
    index.add('p', 'd', words('old words'));
    index.search(['p'], ['old'], 1);
    index.add('p', 'd', words('new words'));
    expect(index.search(['p'], ['old'], 1).hits).toEqual([]);
    expect(index.search(['p'], ['new'], 1).hits[0]?.key).toBe('d');
    expect(index.size('p')).toBe(1);
  });

  it('bm25 - removed documents disappear from results, frozen or buffered', () => {
    const index = new Bm25Index();
    index.add('p', 'frozen', words('term'));
    index.search(['p'], ['term'], 5);
    index.add('p', 'buffered', words('term'));
    expect(index.remove('p', 'frozen')).toBe(true);
    expect(index.remove('p', 'buffered')).toBe(true);
    expect(index.remove('p', 'missing')).toBe(false);
    expect(index.search(['p'], ['term'], 5).hits).toEqual([]);
  });

  it('bm25 - dead postings a segment still holds never make a term weigh less than nothing', () => {
    const index = new Bm25Index();
    for (let i = 0; i < 6; i++) index.add('p', `c${i}`, words('common filler'));
    index.add('p', 'both', words('common rare'));
    index.add('p', 'only', words('rare filler'));
    index.search(['p'], ['common'], 1);
    // Two of eight dead: within the quarter a segment keeps before it is rewritten, and enough
    // for `common` to be in more postings (7) than there are live documents (6).
    index.remove('p', 'c0');
    index.remove('p', 'c1');
    const { hits } = index.search(['p'], words('common rare'), 10);
    expect(hits.slice(0, 2).map((hit) => hit.key)).toEqual(['both', 'only']);
    expect(hits.every((hit) => hit.score > 0)).toBe(true);
  });

  it('bm25 - many small batches interleaved with searches stay correct after merges and deletes', () => {
    const index = new Bm25Index();
    for (let i = 0; i < 300; i++) {
      index.add('p', `d${i}`, words(`shared t${i % 7} unique${i}`));
      if (i % 3 === 0) index.search(['p'], ['shared'], 1);
      if (i % 5 === 0 && i > 0) index.remove('p', `d${i - 1}`);
    }
    expect(index.size('p')).toBe(300 - 59);
    const { hits } = index.search(['p'], ['unique150'], 5);
    expect(hits.map((hit) => hit.key)).toEqual(['d150']);
    expect(index.search(['p'], ['unique149'], 5).hits).toEqual([]);
    expect(index.search(['p'], ['shared'], 1000).hits).toHaveLength(241);
  });

  it('bm25 - a partition written past its buffer limit without searches still answers exactly', () => {
    const index = new Bm25Index();
    for (let i = 0; i < 9_000; i++) index.add('p', `d${i}`, [`t${i}`, 'common']);
    index.remove('p', 'd10');
    expect(index.search(['p'], ['t8999'], 5).hits.map((hit) => hit.key)).toEqual(['d8999']);
    expect(index.search(['p'], ['t10'], 5).hits).toEqual([]);
    expect(index.search(['p'], ['common'], 10_000).hits).toHaveLength(8_999);
  });

  it('bm25 - counts the postings a query reads', () => {
    const index = new Bm25Index();
    index.add('p', 'a', words('x y'));
    index.add('p', 'b', words('x'));
    index.add('q', 'c', words('x'));
    expect(index.search(['p'], words('x y'), 5).postingsTouched).toBe(3);
    expect(index.stats).toEqual({ queries: 1, postingsTouched: 3 });
  });

  it('bm25 - returns at most limit hits, best first', () => {
    const index = new Bm25Index();
    for (let i = 1; i <= 20; i++)
      index.add(
        'p',
        `d${i}`,
        Array(i)
          .fill('x')
          .concat(Array(20 - i).fill('pad')),
      );
    const { hits } = index.search(['p'], ['x'], 5);
    expect(hits.map((hit) => hit.key)).toEqual(['d20', 'd19', 'd18', 'd17', 'd16']);
  });

  it('bm25 - rejects parameters outside their range', () => {
    expect(() => new Bm25Index({ k1: 0 })).toThrow(RangeError);
    expect(() => new Bm25Index({ b: 1.5 })).toThrow(RangeError);
  });
});
