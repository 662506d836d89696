import { describe, expect, it } from 'vitest';
import { approximateTokens } from '@hopline/text';
import { chunkDocument, dedupeKeyFor } from '../src/index.js';

const base = {
  tenantId: 't1',
  kbId: 'kb1',
  docId: 'doc',
  version: 4,
  title: 'Handbook',
  effectiveDate: '2024-01-01',
  sourceUri: 's3://x',
};

describe('chunkDocument', () => {
  it('chunker - a short document is one chunk carrying title, doc id, span, version and date', () => {
    const text = 'One sentence. Another one.';
    const [chunk, ...rest] = chunkDocument({ ...base, text });
    expect(rest).toEqual([]);
    expect(chunk).toMatchObject({
      chunkId: 'doc#0',
      docId: 'doc',
      docVersion: 4,
      title: 'Handbook',
      effectiveDate: '2024-01-01',
      sourceUri: 's3://x',
      span: { start: 0, end: text.length },
      dedupeKey: 'doc#0',
      text,
    });
    expect(chunk?.lexicalText).toBeUndefined();
  });

  it('chunker - long documents split at sentence ends, spans point back into the text', () => {
    const sentences = Array.from(
      { length: 60 },
      (_, i) => `Sentence number ${i} talks about topic ${i} in some detail here.`,
    );
    const text = sentences.join(' ');
    const chunks = chunkDocument({ ...base, text }, { chunkTokens: 100, lexicalWindowTokens: 250 });
    expect(chunks.length).toBeGreaterThan(3);
    for (const chunk of chunks) {
      expect(text.slice(chunk.span.start, chunk.span.end)).toBe(chunk.text);
      expect(approximateTokens(chunk.text)).toBeLessThanOrEqual(100);
      expect(chunk.text.endsWith('.')).toBe(true);
    }
    expect(chunks.map((chunk) => chunk.chunkId)).toEqual(chunks.map((_, i) => `doc#${i}`));
  });

  it('chunker - every chunk is indexed lexically under a longer window that contains it', () => {
    const text = Array.from({ length: 60 }, (_, i) => `Sentence ${i} is here and says little.`).join(' ');
    const chunks = chunkDocument({ ...base, text }, { chunkTokens: 50, lexicalWindowTokens: 160 });
    for (const chunk of chunks) {
      const window = chunk.lexicalText as string;
      expect(window).toContain(chunk.text);
      expect(approximateTokens(window)).toBeLessThanOrEqual(160);
      expect(approximateTokens(window)).toBeGreaterThan(approximateTokens(chunk.text));
    }
  });

  it('chunker - a sentence longer than a chunk is cut at word edges', () => {
    const text = Array.from({ length: 1000 }, (_, i) => `w${i}`).join(' ');
    const chunks = chunkDocument({ ...base, text }, { chunkTokens: 300 });
    expect(chunks.map((chunk) => approximateTokens(chunk.text))).toEqual([300, 300, 300, 100]);
  });

  it('chunker - Chinese text splits at 。 and counts characters as tokens', () => {
    const text = '第一条 合同自签订之日起生效。'.repeat(40);
    const chunks = chunkDocument({ ...base, text }, { chunkTokens: 60 });
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) expect(chunk.text.endsWith('。')).toBe(true);
  });

  it('chunker - text it counts few words in (no spaces, letters outside the BMP, punctuation) is still cut to size', () => {
    const texts = {
      unbroken: 'deadbeef'.repeat(2_000),
      astral: '𠀀𠀁𠀂𡈽𢌱'.repeat(2_000),
      punctuation: '-=~ '.repeat(5_000),
    };
    for (const [kind, text] of Object.entries(texts)) {
      const chunks = chunkDocument({ ...base, text }, { chunkTokens: 100, lexicalWindowTokens: 250 });
      expect(chunks.length, kind).toBeGreaterThan(1);
      for (const chunk of chunks) {
        expect(text.slice(chunk.span.start, chunk.span.end)).toBe(chunk.text);
        expect(chunk.text.length, kind).toBeLessThanOrEqual(100 * 16);
        expect((chunk.lexicalText ?? chunk.text).length, kind).toBeLessThanOrEqual(250 * 16);
        // No character is cut in two.
        expect(chunk.text, kind).not.toMatch(/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/);
      }
      const words = (value: string) => value.replace(/\s+/g, '');
      expect(words(chunks.map((chunk) => chunk.text).join('')), kind).toBe(words(text));
    }
  });

  it('chunker - a lone high surrogate (JSON lets one through) before the only space in reach is cut past, not looped on', () => {
    const text = `\uD83D ${'x'.repeat(5_000)}`;
    const chunks = chunkDocument({ ...base, text }, { chunkTokens: 100 });
    expect(chunks.length).toBeGreaterThan(1);
    expect(
      chunks
        .map((chunk) => chunk.text)
        .join('')
        .replace(/\s+/g, ''),
    ).toBe(text.replace(/\s+/g, ''));
  });

  it('chunker - an empty document still yields its one (title-only) chunk', () => {
    expect(chunkDocument({ ...base, text: '' })).toHaveLength(1);
  });
});

describe('dedupeKeyFor', () => {
  it('dedupe key - is the chunk id when there is one', () => {
    expect(dedupeKeyFor('doc#3', 'text')).toBe('doc#3');
  });

  it('dedupe key - hashes the whole normalised text: templated openings do not collide', () => {
    const a = dedupeKeyFor(undefined, '第十二条 当事人可以解除合同。');
    const b = dedupeKeyFor(undefined, '第十二条 当事人不得解除合同。');
    expect(a).not.toBe(b);
    expect(dedupeKeyFor(undefined, '  Same   TEXT ')).toBe(dedupeKeyFor(undefined, 'same text'));
  });

  it('chunker - a paged document is chunked page by page, and each chunk cites its page', () => {
    const pages = [1, 2, 3].map((page) =>
      Array.from({ length: 20 }, (_, i) => `Page ${page} sentence ${i} says something.`).join(' '),
    );
    const text = pages.join('\n\n');
    const sections = [0, pages[0]!.length + 2, pages[0]!.length + pages[1]!.length + 4].map((start, i) => ({
      start,
      fragment: `page=${i + 1}`,
    }));
    const chunks = chunkDocument({ ...base, sourceUri: 'manual.pdf', text, sections }, { chunkTokens: 60 });
    expect(chunks.length).toBeGreaterThan(3);
    for (const chunk of chunks) {
      const pages = new Set([...chunk.text.matchAll(/Page (\d)/g)].map((match) => match[1]));
      expect(pages.size, chunk.text).toBe(1);
      expect(chunk.sourceUri, chunk.text.slice(0, 30)).toBe(`manual.pdf#page=${[...pages][0]}`);
    }
    expect(chunkDocument({ ...base, text })[0]?.sourceUri).toBe('s3://x');
  });
});
