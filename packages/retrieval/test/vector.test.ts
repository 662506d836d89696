import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ValidationError } from '@hopline/contracts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  AdaptiveVectorIndex,
  EmbeddedVectorBackend,
  FlatVectorIndex,
  HashingEmbedder,
  partitionKey,
} from '../src/index.js';
import { chunkOf, never } from './fixtures.js';

const cosine = (a: Float32Array, b: Float32Array): number =>
  a.reduce((sum, value, i) => sum + value * (b[i] as number), 0);

describe('HashingEmbedder', () => {
  const embedder = new HashingEmbedder({ dimensions: 256 });

  it('embedder - is deterministic and unit length', async () => {
    const [a, b] = await embedder.embed(['The Oakland Athletics', 'The Oakland Athletics'], never);
    expect(a).toEqual(b);
    expect(cosine(a as Float32Array, a as Float32Array)).toBeCloseTo(1, 5);
    expect(a).toHaveLength(256);
    expect(embedder.model).toBe('hashing-ngram-256');
  });

  it('embedder - inflections land closer than unrelated text', async () => {
    const [query, inflected, unrelated] = await embedder.embed(
      ['athletic stadium', 'Athletics stadiums', 'violin concerto premiere'],
      never,
    );
    expect(cosine(query as Float32Array, inflected as Float32Array)).toBeGreaterThan(
      cosine(query as Float32Array, unrelated as Float32Array) + 0.3,
    );
  });

  it('embedder - works for Chinese without spaces', async () => {
    const [query, near, far] = await embedder.embed(['合同解除', '当事人可以解除合同', '今天天气很好'], never);
    expect(cosine(query as Float32Array, near as Float32Array)).toBeGreaterThan(
      cosine(query as Float32Array, far as Float32Array),
    );
  });

  it('embedder - text without features embeds to the zero vector, not NaN', async () => {
    const [empty] = await embedder.embed(['  the of  '], never);
    expect([...(empty as Float32Array)].every((value) => value === 0)).toBe(true);
  });

  it('embedder - an aborted signal rejects', async () => {
    const controller = new AbortController();
    controller.abort(new Error('cancelled'));
    await expect(embedder.embed(['x'], controller.signal)).rejects.toThrow('cancelled');
  });

  it('embedder - rejects a useless dimension count', () => {
    expect(() => new HashingEmbedder({ dimensions: 2 })).toThrow(RangeError);
  });
});

describe('FlatVectorIndex', () => {
  const unit = (...values: number[]): Float32Array => {
    const v = Float32Array.from(values);
    const norm = Math.hypot(...values);
    return v.map((x) => x / norm);
  };

  it('flat index - returns the nearest vectors of the named partitions only', () => {
    const index = new FlatVectorIndex(3);
    index.add('mine', 'a', unit(1, 0, 0));
    index.add('mine', 'b', unit(0, 1, 0));
    index.add('theirs', 'c', unit(1, 0, 0));
    const hits = index.search(['mine'], unit(1, 0.1, 0), 5);
    expect(hits.map((hit) => hit.key)).toEqual(['a', 'b']);
    expect(hits[0]?.score).toBeGreaterThan(0.99);
  });

  it('flat index - removed slots are reused and never returned', () => {
    const index = new FlatVectorIndex(2);
    for (let i = 0; i < 100; i++) index.add('p', `k${i}`, unit(1, i));
    for (let i = 0; i < 50; i++) index.remove('p', `k${i}`);
    for (let i = 100; i < 120; i++) index.add('p', `k${i}`, unit(1, i));
    expect(index.size('p')).toBe(70);
    const keys = index.search(['p'], unit(1, 0), 200).map((hit) => hit.key);
    expect(keys).toHaveLength(70);
    expect(keys.some((key) => Number(key.slice(1)) < 50)).toBe(false);
  });

  it('flat index - a vector of the wrong length is refused', () => {
    const index = new FlatVectorIndex(3);
    expect(() => index.add('p', 'a', new Float32Array(2))).toThrow(RangeError);
  });
});

describe('EmbeddedVectorBackend', () => {
  let dataDir: string;
  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'hopline-vector-'));
  });
  afterEach(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });
  const embedder = new HashingEmbedder({ dimensions: 64 });
  const doc = (docId: string, version = 1, tenantId = 't1') => ({ tenantId, kbId: 'kb1', docId, version });

  it("vector backend - scope filter hides other tenants' chunks", async () => {
    const backend = await EmbeddedVectorBackend.open({ dimensions: 64 });
    const vector = embedder.embedOne('harbour crane');
    await backend.upsertDocument(doc('a', 1, 'ta'), [
      { chunk: chunkOf({ docId: 'a', tenantId: 'ta', text: 'harbour crane' }), vector },
    ]);
    await backend.upsertDocument(doc('b', 1, 'tb'), [
      { chunk: chunkOf({ docId: 'b', tenantId: 'tb', text: 'harbour crane' }), vector },
    ]);
    const hits = await backend.search({ scope: { tenantId: 'tb', kbIds: ['kb1'] }, vector, limit: 10 }, never);
    expect(hits.map((hit) => hit.chunk.tenantId)).toEqual(['tb']);
  });

  it("vector backend - selected documents are searched exactly, and another tenant's document id matches nothing", async () => {
    const backend = await EmbeddedVectorBackend.open({ dimensions: 64 });
    const near = embedder.embedOne('harbour crane');
    const far = embedder.embedOne('quarterly revenue');
    await backend.upsertDocument(doc('a'), [{ chunk: chunkOf({ docId: 'a', text: 'harbour crane' }), vector: near }]);
    await backend.upsertDocument(doc('b'), [
      { chunk: chunkOf({ docId: 'b', chunkId: 'b#0', text: 'quarterly revenue' }), vector: far },
      { chunk: chunkOf({ docId: 'b', chunkId: 'b#1', text: 'harbour crane' }), vector: near },
    ]);
    await backend.upsertDocument(doc('theirs', 1, 't2'), [
      { chunk: chunkOf({ docId: 'theirs', tenantId: 't2', text: 'harbour crane' }), vector: near },
    ]);
    const search = (docIds: string[], limit = 10) =>
      backend.search({ scope: { tenantId: 't1', kbIds: ['kb1'], docIds }, vector: near, limit }, never);
    expect((await search(['b'])).map((hit) => hit.chunk.chunkId)).toEqual(['b#1', 'b#0']);
    expect((await search(['b'], 1)).map((hit) => hit.chunk.chunkId)).toEqual(['b#1']);
    expect(await search(['theirs'])).toEqual([]);
    await backend.deleteDocument(doc('b', 2));
    expect(await search(['b'])).toEqual([]);
  });

  it('vector backend - a restart keeps the vectors and the versions', async () => {
    const first = await EmbeddedVectorBackend.open({ dimensions: 64, dataDir });
    const vector = embedder.embedOne('harbour crane');
    await first.upsertDocument(doc('a', 2), [
      { chunk: chunkOf({ docId: 'a', docVersion: 2, text: 'harbour crane' }), vector },
    ]);
    await first.close();
    const second = await EmbeddedVectorBackend.open({ dimensions: 64, dataDir });
    const hits = await second.search({ scope: { tenantId: 't1', kbIds: ['kb1'] }, vector, limit: 1 }, never);
    expect(hits[0]?.score).toBeCloseTo(1, 5);
    expect(await second.upsertDocument(doc('a', 1), [])).toBe('stale');
    await second.close();
  });

  it('vector backend - a log written with other dimensions refuses to load', async () => {
    const first = await EmbeddedVectorBackend.open({ dimensions: 64, dataDir });
    await first.upsertDocument(doc('a'), [
      { chunk: chunkOf({ docId: 'a', text: 'x' }), vector: embedder.embedOne('x') },
    ]);
    await first.close();
    await expect(EmbeddedVectorBackend.open({ dimensions: 32, dataDir })).rejects.toThrow(/64 dimensions/);
  });

  it('vector backend - a vector of the wrong length is a validation error', async () => {
    const backend = await EmbeddedVectorBackend.open({ dimensions: 64 });
    await expect(
      backend.upsertDocument(doc('a'), [{ chunk: chunkOf({ docId: 'a', text: 'x' }), vector: new Float32Array(3) }]),
    ).rejects.toBeInstanceOf(ValidationError);
  });

  it('vector backend - says how many vectors wait for the graph, searchable meanwhile', async () => {
    const waiting: Array<() => void> = [];
    const nextTurn = () => new Promise<void>((resolve) => waiting.push(resolve));
    const index = new AdaptiveVectorIndex(64, { flatLimit: 2, nextTurn });
    const backend = await EmbeddedVectorBackend.open({ dimensions: 64, createIndex: () => index });
    const items = [0, 1, 2, 3, 4].map((i) => ({
      chunk: chunkOf({ docId: 'd', chunkId: `d#${i}`, text: `chunk ${i}` }),
      vector: embedder.embedOne(`chunk ${i}`),
    }));
    await backend.upsertDocument(doc('d'), items);
    expect(backend.bufferedVectors()).toBe(5);
    const [best] = await backend.search(
      { scope: { tenantId: 't1', kbIds: ['kb1'] }, vector: items[3]!.vector, limit: 1 },
      never,
    );
    expect(best?.chunk.chunkId).toBe('d#3');
    // Let the builder take its turns until the buffer is in the graph.
    while (backend.bufferedVectors() > 0) {
      waiting.splice(0).forEach((resolve) => resolve());
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(index.usesGraph(partitionKey('t1', 'kb1'))).toBe(true);
    expect(backend.bufferedVectors()).toBe(0);
    await backend.close();
  });
});
