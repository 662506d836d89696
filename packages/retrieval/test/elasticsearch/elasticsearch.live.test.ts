import { randomUUID } from 'node:crypto';
import { Client } from '@elastic/elasticsearch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentTerms } from '@hopline/text';
import type { IndexedChunk } from '../../src/index.js';
import { createEntityGraph, createSharedGraphSync } from '../../src/index.js';
import type { ElasticsearchLexicalBackend } from '../../src/remote.js';
import { createElasticsearchLexicalBackend } from '../../src/remote.js';
import { chunkOf, never } from '../fixtures.js';
import { silentLog } from './es-mock.js';

// Runs only against a real cluster: ELASTICSEARCH_URL=http://127.0.0.1:9200 (docker compose up elasticsearch).
const url = process.env.ELASTICSEARCH_URL;

describe.skipIf(!url)('elasticsearch lexical backend - live cluster', () => {
  const index = `hopline-test-${randomUUID()}`;
  let admin: Client;
  let backend: ElasticsearchLexicalBackend;

  const scope = { tenantId: 't1', kbIds: ['kb1'] };
  const key = (docId: string, version: number) => ({ tenantId: 't1', kbId: 'kb1', docId, version });
  const chunk = (
    docId: string,
    index: number,
    version: number,
    title: string,
    text: string,
    tenantId = 't1',
  ): IndexedChunk => chunkOf({ tenantId, docId, chunkId: `${docId}#${index}`, docVersion: version, title, text });
  const searchIds = async (query: string): Promise<string[]> =>
    (await backend.search({ scope, query, limit: 10 }, never))
      .map((hit) => `${hit.chunk.chunkId}@${hit.chunk.docVersion}`)
      .sort();

  beforeAll(async () => {
    admin = new Client({ node: url as string });
    backend = await createElasticsearchLexicalBackend({ node: url as string, index, log: silentLog });
  });

  afterAll(async () => {
    await backend?.close();
    await admin?.indices.delete({ index: [index, `${index}-documents`] }, { ignore: [404] });
    await admin?.close();
  });

  it('elasticsearch live - finds English and Chinese text by BM25 within the scope only', async () => {
    await backend.upsertDocument(key('http', 1), [
      chunk('http', 0, 1, 'RFC 7231', 'HTTP/1.1 semantics: top_p is not a header'),
    ]);
    await backend.upsertDocument(key('law', 1), [
      chunk('law', 0, 1, '劳动合同法', '第十二条 劳动合同分为固定期限劳动合同'),
    ]);
    await backend.upsertDocument({ tenantId: 't2', kbId: 'kb1', docId: 'http', version: 1 }, [
      chunk('http', 0, 1, 'RFC 7231', 'HTTP/1.1 semantics', 't2'),
    ]);
    await expect.poll(() => searchIds('RFC 7231'), { timeout: 10_000 }).toEqual(['http#0@1']);
    await expect.poll(() => searchIds('第十二条'), { timeout: 10_000 }).toEqual(['law#0@1']);
    expect(await searchIds('top_p')).toEqual(['http#0@1']);
  });

  it('elasticsearch live - a date in the query ranks the chunk that states it first', async () => {
    await backend.upsertDocument(key('october', 1), [
      chunk('october', 0, 1, '', '2023年10月16日，港口公司发布年度公告'),
    ]);
    await backend.upsertDocument(key('june', 1), [chunk('june', 0, 1, '', '2022年6月3日，港口公司发布年度公告')]);
    const ranked = async (query: string) =>
      (await backend.search({ scope, query, limit: 2 }, never)).map((hit) => hit.chunk.docId);
    await expect.poll(() => ranked('2022年6月港口公司公告'), { timeout: 10_000 }).toEqual(['june', 'october']);
    expect(await ranked('10月16日港口公司公告')).toEqual(['october', 'june']);
  });

  it('elasticsearch live - a newer version replaces the old chunks and an older one never comes back', async () => {
    await backend.upsertDocument(key('policy', 2), [
      chunk('policy', 0, 2, 'Policy', 'retention two years'),
      chunk('policy', 1, 2, 'Policy', 'retention appendix'),
    ]);
    expect(
      await backend.upsertDocument(key('policy', 3), [chunk('policy', 0, 3, 'Policy', 'retention three years')]),
    ).toBe('applied');
    expect(
      await backend.upsertDocument(key('policy', 2), [
        chunk('policy', 0, 2, 'Policy', 'retention two years'),
        chunk('policy', 1, 2, 'Policy', 'retention appendix'),
      ]),
    ).toBe('stale');
    await expect.poll(() => searchIds('retention'), { timeout: 10_000 }).toEqual(['policy#0@3']);
    expect(await backend.documentState({ tenantId: 't1', kbId: 'kb1', docId: 'policy' })).toEqual({
      version: 3,
      deleted: false,
      chunks: 1,
    });
  });

  it('elasticsearch live - a delete removes the document and keeps older versions out', async () => {
    await backend.upsertDocument(key('memo', 1), [chunk('memo', 0, 1, 'Memo', 'quarterly lighthouse memo')]);
    expect(await backend.deleteDocument(key('memo', 1))).toBe('applied');
    expect(
      await backend.upsertDocument(key('memo', 1), [chunk('memo', 0, 1, 'Memo', 'quarterly lighthouse memo')]),
    ).toBe('stale');
    await expect.poll(() => searchIds('lighthouse'), { timeout: 10_000 }).toEqual([]);
    expect(await backend.upsertDocument(key('memo', 2), [chunk('memo', 0, 2, 'Memo', 'annual lighthouse memo')])).toBe(
      'applied',
    );
    await expect.poll(() => searchIds('lighthouse'), { timeout: 10_000 }).toEqual(['memo#0@2']);
  });

  it('elasticsearch live - counts chunks per knowledge base', async () => {
    await admin.indices.refresh({ index });
    const counts = await backend.countChunks();
    expect(counts).toContainEqual({ tenantId: 't1', kbId: 'kb1', chunks: 4 });
    expect(counts).toContainEqual({ tenantId: 't2', kbId: 'kb1', chunks: 1 });
  });

  it("elasticsearch live - a second worker's entity graph, read back from the index, walks as the writer's", async () => {
    const names = (title: string, text: string) =>
      [title, ...(text.match(/\p{Lu}\p{L}+(?:\s+\p{Lu}\p{L}+)*/gu) ?? [])]
        .map((name) => contentTerms(name).join(' '))
        .filter(Boolean);
    const graphDoc = (docId: string, text: string) => {
      const written = chunkOf({ tenantId: 't3', kbId: 'graph', docId, text });
      return { ...written, entities: names(written.title, written.text) };
    };
    const writer = createEntityGraph(names);
    for (const [docId, text] of [
      ['collab', 'Ada Lovelace wrote the first program with Charles Babbage.'],
      ['born', 'Charles Babbage came into the world in Walworth.'],
    ] as const) {
      const doc = { tenantId: 't3', kbId: 'graph', docId, version: 1 };
      const written = graphDoc(docId, text);
      expect(await backend.upsertDocument(doc, [written])).toBe('applied');
      writer.putDocument(doc, [written]);
    }
    const reader = createEntityGraph(names);
    const { sync } = createSharedGraphSync(reader, backend);
    const walk = (graph: typeof writer) =>
      graph
        .expand({ scope: { tenantId: 't3', kbIds: ['graph'] }, seeds: ['Ada Lovelace'], limit: 5 })
        .map(({ chunk }) => chunk.docId);
    await expect.poll(async () => (await sync(), walk(reader)), { timeout: 10_000 }).toEqual(walk(writer));
    expect(walk(reader)).toEqual(['collab', 'born']);
  });
});
