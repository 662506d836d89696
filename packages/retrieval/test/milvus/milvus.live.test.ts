import { randomUUID } from 'node:crypto';
import { MilvusClient } from '@zilliz/milvus2-sdk-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmbeddedChunk } from '../../src/index.js';
import type { MilvusVectorBackend } from '../../src/remote.js';
import { createMilvusVectorBackend } from '../../src/remote.js';
import { chunkOf, never } from '../fixtures.js';

// Runs only against a real server: MILVUS_ADDRESS=127.0.0.1:19530 (docker compose up milvus).
const address = process.env.MILVUS_ADDRESS;
const DIM = 8;

describe.skipIf(!address)('milvus vector backend - live server', () => {
  const collection = `hopline_test_${randomUUID().replaceAll('-', '')}`;
  let backend: MilvusVectorBackend;

  const vectorOf = (...values: number[]): Float32Array => Float32Array.from({ length: DIM }, (_, i) => values[i] ?? 0);
  const item = (
    docId: string,
    index: number,
    version: number,
    vector: Float32Array,
    where: { tenantId?: string; kbId?: string } = {},
  ): EmbeddedChunk => ({
    chunk: chunkOf({
      docId,
      chunkId: `${docId}#${index}`,
      docVersion: version,
      title: docId,
      text: `${docId} ${index}`,
      ...where,
    }),
    vector,
  });
  const key = (docId: string, version: number, where: { tenantId?: string; kbId?: string } = {}) => ({
    tenantId: 't1',
    kbId: 'kb1',
    docId,
    version,
    ...where,
  });
  const found = async (kbIds: string[]): Promise<string[]> =>
    (await backend.search({ scope: { tenantId: 't1', kbIds }, vector: vectorOf(1, 1), limit: 10 }, never))
      .map((hit) => `${hit.chunk.kbId}/${hit.chunk.chunkId}@${hit.chunk.docVersion}`)
      .sort();

  beforeAll(async () => {
    backend = await createMilvusVectorBackend({ address: address as string, collection, dimensions: DIM });
  });

  afterAll(async () => {
    await backend?.close();
    const admin = new MilvusClient({ address: address as string, logLevel: 'error' });
    await admin.dropCollection({ collection_name: collection });
    await admin.dropCollection({ collection_name: `${collection}_documents` });
    await admin.closeConnection();
  });

  it('milvus live - finds vectors inside the tenant and kbs asked for only', async () => {
    await backend.upsertDocument(key('a', 1), [item('a', 0, 1, vectorOf(1, 1))]);
    await backend.upsertDocument(key('b', 1, { kbId: 'kb2' }), [item('b', 0, 1, vectorOf(1, 0.9), { kbId: 'kb2' })]);
    await backend.upsertDocument(key('c', 1, { tenantId: 't2' }), [
      item('c', 0, 1, vectorOf(1, 1), { tenantId: 't2' }),
    ]);
    await expect.poll(() => found(['kb1']), { timeout: 15_000 }).toEqual(['kb1/a#0@1']);
    await expect.poll(() => found(['kb1', 'kb2']), { timeout: 15_000 }).toEqual(['kb1/a#0@1', 'kb2/b#0@1']);
    expect(await found(['kb1" || tenant_id != "'])).toEqual([]);
  });

  it('milvus live - a newer version replaces the old vectors, an older one and a delete below it change nothing', async () => {
    await backend.upsertDocument(key('p', 2), [item('p', 0, 2, vectorOf(1, 1)), item('p', 1, 2, vectorOf(1, 1))]);
    expect(await backend.upsertDocument(key('p', 3), [item('p', 0, 3, vectorOf(1, 1))])).toBe('applied');
    expect(await backend.upsertDocument(key('p', 2), [item('p', 0, 2, vectorOf(1, 1))])).toBe('stale');
    expect(await backend.deleteDocument(key('p', 2))).toBe('stale');
    expect(await backend.documentState(key('p', 3))).toEqual({ version: 3, deleted: false, chunks: 1 });
    await expect.poll(() => found(['kb1']), { timeout: 15_000 }).toEqual(['kb1/a#0@1', 'kb1/p#0@3']);
  });

  it('milvus live - a delete removes the document and keeps older versions out', async () => {
    await backend.upsertDocument(key('m', 1), [item('m', 0, 1, vectorOf(1, 1))]);
    expect(await backend.deleteDocument(key('m', 1))).toBe('applied');
    expect(await backend.upsertDocument(key('m', 1), [item('m', 0, 1, vectorOf(1, 1))])).toBe('stale');
    await expect.poll(() => found(['kb1']), { timeout: 15_000 }).toEqual(['kb1/a#0@1', 'kb1/p#0@3']);
  });

  it('milvus live - counts vectors per knowledge base', async () => {
    const counts = await backend.countChunks();
    expect(counts).toEqual(
      expect.arrayContaining([
        { tenantId: 't1', kbId: 'kb1', chunks: 2 },
        { tenantId: 't1', kbId: 'kb2', chunks: 1 },
        { tenantId: 't2', kbId: 'kb1', chunks: 1 },
      ]),
    );
  });
});
