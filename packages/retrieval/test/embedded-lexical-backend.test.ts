import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ValidationError } from '@hopline/contracts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EmbeddedLexicalBackend, LEXICAL_LOG_FILE } from '../src/index.js';
import { chunkOf, never } from './fixtures.js';

let dataDir: string;
beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'hopline-lexical-'));
});
afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

const doc = (docId: string, version = 1, tenantId = 't1', kbId = 'kb1') => ({ tenantId, kbId, docId, version });

describe('EmbeddedLexicalBackend', () => {
  it("retrieval - scope filter hides other tenants' chunks", async () => {
    const backend = await EmbeddedLexicalBackend.open();
    await backend.upsertDocument(doc('a', 1, 'tenant-a'), [
      chunkOf({ docId: 'a', tenantId: 'tenant-a', text: 'quarterly revenue report' }),
    ]);
    await backend.upsertDocument(doc('b', 1, 'tenant-b'), [
      chunkOf({ docId: 'b', tenantId: 'tenant-b', text: 'quarterly revenue report revenue' }),
    ]);
    const hits = await backend.search(
      { scope: { tenantId: 'tenant-a', kbIds: ['kb1'] }, query: 'revenue', limit: 10 },
      never,
    );
    expect(hits.map((hit) => hit.chunk.docId)).toEqual(['a']);
  });

  it('retrieval - scope filter hides knowledge bases the caller did not name', async () => {
    const backend = await EmbeddedLexicalBackend.open();
    await backend.upsertDocument(doc('a', 1, 't1', 'kb1'), [chunkOf({ docId: 'a', text: 'alpha' })]);
    await backend.upsertDocument(doc('b', 1, 't1', 'kb2'), [chunkOf({ docId: 'b', kbId: 'kb2', text: 'alpha' })]);
    const hits = await backend.search({ scope: { tenantId: 't1', kbIds: ['kb2'] }, query: 'alpha', limit: 10 }, never);
    expect(hits.map((hit) => hit.chunk.kbId)).toEqual(['kb2']);
  });

  it("retrieval - selected documents narrow the search, and another tenant's document id matches nothing", async () => {
    const backend = await EmbeddedLexicalBackend.open();
    await backend.upsertDocument(doc('a'), [chunkOf({ docId: 'a', text: 'revenue report' })]);
    await backend.upsertDocument(doc('b'), [chunkOf({ docId: 'b', text: 'revenue revenue report' })]);
    await backend.upsertDocument(doc('c'), [chunkOf({ docId: 'c', text: 'revenue' })]);
    await backend.upsertDocument(doc('theirs', 1, 't2'), [
      chunkOf({ docId: 'theirs', tenantId: 't2', text: 'revenue revenue revenue' }),
    ]);
    const search = (docIds: string[]) =>
      backend.search({ scope: { tenantId: 't1', kbIds: ['kb1'], docIds }, query: 'revenue', limit: 10 }, never);
    expect((await search(['a', 'c'])).map((hit) => hit.chunk.docId).sort()).toEqual(['a', 'c']);
    expect(await search(['theirs'])).toEqual([]);
    // The limit applies to the selected documents, not to the kb before filtering.
    const one = await backend.search(
      { scope: { tenantId: 't1', kbIds: ['kb1'], docIds: ['c'] }, query: 'revenue', limit: 1 },
      never,
    );
    expect(one.map((hit) => hit.chunk.docId)).toEqual(['c']);
    expect((await search([])).map((hit) => hit.chunk.docId).sort()).toEqual(['a', 'b', 'c']);
  });

  it('retrieval - a scope without tenant or knowledge base is rejected, not widened', async () => {
    const backend = await EmbeddedLexicalBackend.open();
    await expect(
      backend.search({ scope: { tenantId: '', kbIds: ['kb1'] }, query: 'x', limit: 1 }, never),
    ).rejects.toBeInstanceOf(ValidationError);
    await expect(
      backend.search({ scope: { tenantId: 't1', kbIds: [] }, query: 'x', limit: 1 }, never),
    ).rejects.toBeInstanceOf(ValidationError);
  });

  it("retrieval - the title counts towards a chunk's terms", async () => {
    const backend = await EmbeddedLexicalBackend.open();
    await backend.upsertDocument(doc('a'), [
      chunkOf({ docId: 'a', title: 'Athens', text: 'a city with a long history' }),
    ]);
    await backend.upsertDocument(doc('b'), [
      chunkOf({ docId: 'b', title: 'Rome', text: 'a city that mentions Athens once' }),
    ]);
    const hits = await backend.search({ scope: { tenantId: 't1', kbIds: ['kb1'] }, query: 'Athens', limit: 2 }, never);
    expect(hits[0]?.chunk.docId).toBe('a');
  });

  it('retrieval - the lexical window is searched but the chunk is returned', async () => {
    const backend = await EmbeddedLexicalBackend.open();
    const chunk = chunkOf({
      docId: 'a',
      text: 'short chunk text',
      lexicalText: 'short chunk text and its neighbour about zebras',
    });
    await backend.upsertDocument(doc('a'), [chunk]);
    const hits = await backend.search({ scope: { tenantId: 't1', kbIds: ['kb1'] }, query: 'zebras', limit: 1 }, never);
    expect(hits[0]?.chunk.text).toBe('short chunk text');
  });

  it('versions - an older version never overwrites a newer one, the same one is a no-op', async () => {
    const backend = await EmbeddedLexicalBackend.open();
    expect(await backend.upsertDocument(doc('a', 2), [chunkOf({ docId: 'a', docVersion: 2, text: 'new text' })])).toBe(
      'applied',
    );
    expect(await backend.upsertDocument(doc('a', 1), [chunkOf({ docId: 'a', text: 'old text' })])).toBe('stale');
    expect(await backend.upsertDocument(doc('a', 2), [chunkOf({ docId: 'a', docVersion: 2, text: 'new text' })])).toBe(
      'unchanged',
    );
    const hits = await backend.search({ scope: { tenantId: 't1', kbIds: ['kb1'] }, query: 'old new', limit: 5 }, never);
    expect(hits.map((hit) => hit.chunk.text)).toEqual(['new text']);
  });

  it('versions - a delete removes the chunks and keeps older upserts out', async () => {
    const backend = await EmbeddedLexicalBackend.open();
    await backend.upsertDocument(doc('a', 1), [chunkOf({ docId: 'a', text: 'gone soon' })]);
    expect(await backend.deleteDocument(doc('a', 1))).toBe('applied');
    expect(await backend.upsertDocument(doc('a', 1), [chunkOf({ docId: 'a', text: 'gone soon' })])).toBe('stale');
    expect(await backend.search({ scope: { tenantId: 't1', kbIds: ['kb1'] }, query: 'gone', limit: 5 }, never)).toEqual(
      [],
    );
    expect(await backend.documentState({ tenantId: 't1', kbId: 'kb1', docId: 'a' })).toEqual({
      version: 1,
      deleted: true,
      chunks: 0,
    });
    expect(
      await backend.upsertDocument(doc('a', 2), [chunkOf({ docId: 'a', docVersion: 2, text: 'back again' })]),
    ).toBe('applied');
  });

  it('versions - replacing a document drops chunks the new version no longer has', async () => {
    const backend = await EmbeddedLexicalBackend.open();
    await backend.upsertDocument(doc('a', 1), [
      chunkOf({ docId: 'a', text: 'one' }),
      chunkOf({ docId: 'a', chunkId: 'a#1', text: 'two' }),
    ]);
    await backend.upsertDocument(doc('a', 2), [chunkOf({ docId: 'a', docVersion: 2, text: 'three' })]);
    expect(await backend.countChunks()).toEqual([{ tenantId: 't1', kbId: 'kb1', documents: 1, chunks: 1 }]);
  });

  it('persistence - a restart keeps the knowledge base, deletes and versions included', async () => {
    const first = await EmbeddedLexicalBackend.open({ dataDir });
    await first.upsertDocument(doc('a', 3), [chunkOf({ docId: 'a', docVersion: 3, text: 'persistent lighthouse' })]);
    await first.upsertDocument(doc('b', 1), [chunkOf({ docId: 'b', text: 'deleted lighthouse' })]);
    await first.deleteDocument(doc('b', 1));
    await first.close();

    const second = await EmbeddedLexicalBackend.open({ dataDir });
    const hits = await second.search(
      { scope: { tenantId: 't1', kbIds: ['kb1'] }, query: 'lighthouse', limit: 5 },
      never,
    );
    expect(hits.map((hit) => hit.chunk.docId)).toEqual(['a']);
    expect(await second.upsertDocument(doc('a', 2), [chunkOf({ docId: 'a', docVersion: 2, text: 'older' })])).toBe(
      'stale',
    );
    expect(await second.upsertDocument(doc('b', 1), [chunkOf({ docId: 'b', text: 'deleted lighthouse' })])).toBe(
      'stale',
    );
    await second.close();
  });

  it('persistence - a snapshot whose terms another tokenizer version made is indexed again, one of the same version is loaded as it is', async () => {
    /** Splits on spaces, cased as `cased`; counts the texts it is given. */
    const words = (version: string, cased: (word: string) => string) => {
      const texts: string[] = [];
      return { texts, version, tokenize: (text: string) => (texts.push(text), text.split(' ').map(cased)) };
    };
    const lower = words('lower', (word) => word.toLowerCase());
    const first = await EmbeddedLexicalBackend.open({ dataDir, tokenizer: lower });
    await first.upsertDocument(doc('a'), [chunkOf({ docId: 'a', text: 'Lighthouse keeper' })]);
    await first.close();
    const search = (backend: EmbeddedLexicalBackend, query: string) =>
      backend.search({ scope: { tenantId: 't1', kbIds: ['kb1'] }, query, limit: 5 }, never);

    const same = words('lower', (word) => word.toLowerCase());
    const loaded = await EmbeddedLexicalBackend.open({ dataDir, tokenizer: same });
    expect(loaded.tail).toBe(0);
    expect((await search(loaded, 'lighthouse')).map((hit) => hit.chunk.docId)).toEqual(['a']);
    // The stored terms served the search: no document text was tokenized again.
    expect(same.texts).toEqual(['lighthouse']);
    await loaded.close();

    const upper = words('upper', (word) => word.toUpperCase());
    const rebuilt = await EmbeddedLexicalBackend.open({ dataDir, tokenizer: upper });
    expect((await search(rebuilt, 'lighthouse')).map((hit) => hit.chunk.docId)).toEqual(['a']);
    expect(upper.texts).toContain('Lighthouse keeper');
    await rebuilt.close();
    // Closed without a write, it still stored the new terms: the next start loads them.
    const again = words('upper', (word) => word.toUpperCase());
    const reloaded = await EmbeddedLexicalBackend.open({ dataDir, tokenizer: again });
    expect((await search(reloaded, 'lighthouse')).map((hit) => hit.chunk.docId)).toEqual(['a']);
    expect(again.texts).toEqual(['lighthouse']);
    await reloaded.close();
  });

  it('persistence - a torn last line (crash mid-write) is dropped, the rest replays', async () => {
    const first = await EmbeddedLexicalBackend.open({ dataDir });
    await first.upsertDocument(doc('a'), [chunkOf({ docId: 'a', text: 'survivor' })]);
    await first.close();
    const file = join(dataDir, LEXICAL_LOG_FILE);
    await writeFile(file, `${await readFile(file, 'utf8')}{"op":"upsert","doc":{"tenan`);

    const second = await EmbeddedLexicalBackend.open({ dataDir });
    const hits = await second.search({ scope: { tenantId: 't1', kbIds: ['kb1'] }, query: 'survivor', limit: 5 }, never);
    expect(hits).toHaveLength(1);
    await second.upsertDocument(doc('c'), [chunkOf({ docId: 'c', text: 'after the tear' })]);
    await second.close();
    const third = await EmbeddedLexicalBackend.open({ dataDir });
    expect(await third.countChunks()).toEqual([{ tenantId: 't1', kbId: 'kb1', documents: 2, chunks: 2 }]);
    await third.close();
  });

  it('persistence - damage before the last line fails loudly', async () => {
    await writeFile(
      join(dataDir, LEXICAL_LOG_FILE),
      'not json\n{"op":"delete","doc":{"tenantId":"t","kbId":"k","docId":"d","version":1}}\n',
    );
    await expect(EmbeddedLexicalBackend.open({ dataDir })).rejects.toThrow(/damaged at line 1/);
  });

  it('persistence - a log line that is JSON but not a valid write fails loudly', async () => {
    await writeFile(join(dataDir, LEXICAL_LOG_FILE), '{"op":"upsert","doc":{"tenantId":"t"}}\n');
    await expect(EmbeddedLexicalBackend.open({ dataDir })).rejects.toThrow(/entry 1 is not a valid write/);
  });

  it('persistence - a large log is taken into a snapshot, and a close leaves nothing to replay', async () => {
    const backend = await EmbeddedLexicalBackend.open({ dataDir, durable: false });
    for (let version = 1; version <= 1_100; version++) {
      await backend.upsertDocument(doc('a', version), [
        chunkOf({ docId: 'a', docVersion: version, text: `revision ${version}` }),
      ]);
    }
    const lines = (await readFile(join(dataDir, LEXICAL_LOG_FILE), 'utf8')).trim().split('\n');
    expect(lines).toHaveLength(100);
    await backend.close();
    expect(await readFile(join(dataDir, LEXICAL_LOG_FILE), 'utf8')).toBe('');
    const reopened = await EmbeddedLexicalBackend.open({ dataDir });
    expect(await reopened.documentState({ tenantId: 't1', kbId: 'kb1', docId: 'a' })).toEqual({
      version: 1_100,
      deleted: false,
      chunks: 1,
    });
    await reopened.close();
  });

  it('search - an aborted signal stops the search', async () => {
    const backend = await EmbeddedLexicalBackend.open();
    const controller = new AbortController();
    controller.abort(new Error('gone'));
    await expect(
      backend.search({ scope: { tenantId: 't1', kbIds: ['kb1'] }, query: 'x', limit: 1 }, controller.signal),
    ).rejects.toThrow('gone');
  });
});
