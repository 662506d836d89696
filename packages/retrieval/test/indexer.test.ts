import type { Document__Output, IngestCommand__Output } from '@hopline/contracts';
import { UnavailableError, ValidationError } from '@hopline/contracts';
import { describe, expect, it } from 'vitest';
import type { Embedder, VectorBackend } from '../src/index.js';
import {
  EmbeddedLexicalBackend,
  EmbeddedVectorBackend,
  HashingEmbedder,
  compareChunkCounts,
  createIndexer,
} from '../src/index.js';
import { never } from './fixtures.js';

const document = (overrides: Partial<Document__Output> = {}): Document__Output => ({
  tenantId: 't1',
  kbId: 'kb1',
  docId: 'policy',
  version: 1,
  title: 'Travel policy',
  text: 'Employees book economy class for flights under six hours.',
  effectiveDate: '2024-03-01',
  sourceUri: 'docs/travel.md',
  metadata: {},
  ...overrides,
});

async function setup(embedder: Embedder = new HashingEmbedder({ dimensions: 64 })) {
  const lexical = await EmbeddedLexicalBackend.open();
  const vector = await EmbeddedVectorBackend.open({ dimensions: 64 });
  return { lexical, vector, embedder };
}

const countingEmbedder = (): Embedder & { texts: number; calls: number } => {
  const inner = new HashingEmbedder({ dimensions: 64 });
  const spy = {
    model: inner.model,
    dimensions: 64,
    texts: 0,
    calls: 0,
    embed(texts: readonly string[], signal: AbortSignal) {
      spy.calls++;
      spy.texts += texts.length;
      return inner.embed(texts, signal);
    },
  };
  return spy;
};

describe('createIndexer', () => {
  it('indexer - an upsert reaches both sides with the same chunks and reports the change', async () => {
    const deps = await setup();
    const indexer = createIndexer(deps);
    const result = await indexer.apply({ op: 'upsert', upsert: document() });
    expect(result).toMatchObject({ op: 'upsert', lexical: 'applied', vector: 'applied', chunks: 1, changed: true });
    expect(await deps.lexical.countChunks()).toEqual([{ tenantId: 't1', kbId: 'kb1', documents: 1, chunks: 1 }]);
    expect(await deps.vector.countChunks()).toEqual([{ tenantId: 't1', kbId: 'kb1', documents: 1, chunks: 1 }]);
    const [hit] = await deps.lexical.search(
      { scope: { tenantId: 't1', kbIds: ['kb1'] }, query: 'economy flights', limit: 1 },
      never,
    );
    expect(hit?.chunk).toMatchObject({
      docId: 'policy',
      docVersion: 1,
      title: 'Travel policy',
      effectiveDate: '2024-03-01',
    });
  });

  it('indexer - redelivery of the same version is a no-op that embeds nothing', async () => {
    const embedder = countingEmbedder();
    const indexer = createIndexer(await setup(embedder));
    await indexer.apply({ op: 'upsert', upsert: document() });
    const embeddedBefore = embedder.texts;
    const again = await indexer.apply({ op: 'upsert', upsert: document() });
    expect(again).toMatchObject({ lexical: 'unchanged', vector: 'unchanged', chunks: 0, changed: false });
    expect(embedder.texts).toBe(embeddedBefore);
  });

  it('indexer - an older version arriving late never overwrites the newer one', async () => {
    const deps = await setup();
    const indexer = createIndexer(deps);
    await indexer.apply({
      op: 'upsert',
      upsert: document({ version: 2, text: 'Business class is allowed from now on.' }),
    });
    const late = await indexer.apply({ op: 'upsert', upsert: document({ version: 1 }) });
    expect(late).toMatchObject({ lexical: 'stale', vector: 'stale', changed: false });
    const hits = await deps.lexical.search(
      { scope: { tenantId: 't1', kbIds: ['kb1'] }, query: 'economy business', limit: 5 },
      never,
    );
    expect(hits.map((hit) => hit.chunk.docVersion)).toEqual([2]);
  });

  it('indexer - a delete removes the document from both sides and keeps it out', async () => {
    const deps = await setup();
    const indexer = createIndexer(deps);
    await indexer.apply({ op: 'upsert', upsert: document() });
    const removed = await indexer.apply({
      op: 'delete',
      delete: { tenantId: 't1', kbId: 'kb1', docId: 'policy', version: 1 },
    });
    expect(removed).toMatchObject({ op: 'delete', lexical: 'applied', vector: 'applied', changed: true });
    expect(await indexer.apply({ op: 'upsert', upsert: document() })).toMatchObject({
      lexical: 'stale',
      vector: 'stale',
    });
    expect(await deps.lexical.countChunks()).toEqual([{ tenantId: 't1', kbId: 'kb1', documents: 0, chunks: 0 }]);
    expect(
      await indexer.apply({ op: 'delete', delete: { tenantId: 't1', kbId: 'kb1', docId: 'policy', version: 1 } }),
    ).toMatchObject({ changed: false });
  });

  it('indexer - a write that failed on one side completes that side alone on redelivery', async () => {
    const deps = await setup();
    let failNext = true;
    const flaky: VectorBackend = new Proxy(deps.vector, {
      get: (target, key, receiver) =>
        key === 'writeDocuments'
          ? (writes: Parameters<VectorBackend['writeDocuments']>[0]) => {
              if (failNext) {
                failNext = false;
                return Promise.reject(new UnavailableError('vector store unreachable'));
              }
              return target.writeDocuments(writes);
            }
          : Reflect.get(target, key, receiver),
    });
    const indexer = createIndexer({ ...deps, vector: flaky });
    await expect(indexer.apply({ op: 'upsert', upsert: document() })).rejects.toBeInstanceOf(UnavailableError);
    const gap = await indexer.checkConsistency();
    expect(gap.consistent).toBe(false);
    const retry = await indexer.apply({ op: 'upsert', upsert: document() });
    expect(retry).toMatchObject({ lexical: 'unchanged', vector: 'applied', changed: true });
    expect((await indexer.checkConsistency()).consistent).toBe(true);
  });

  it('indexer - a write a backend refused alone fails its own command; the others in the batch are applied', async () => {
    const deps = await setup();
    const refusing: VectorBackend = new Proxy(deps.vector, {
      get: (target, key, receiver) =>
        key === 'writeDocuments'
          ? async (writes: Parameters<VectorBackend['writeDocuments']>[0]) => {
              const results = await target.writeDocuments(writes.filter((write) => write.doc.docId !== 'b'));
              return writes.map((write) =>
                write.doc.docId === 'b' ? new ValidationError('item b refused') : results.shift(),
              );
            }
          : Reflect.get(target, key, receiver),
    });
    const indexer = createIndexer({ ...deps, vector: refusing });
    const attempts = await indexer.applyAll(
      ['a', 'b', 'c'].map((docId) => ({ op: 'upsert', upsert: document({ docId }) })),
      never,
    );
    expect(attempts.map((attempt) => attempt.ok)).toEqual([true, false, true]);
    expect(attempts[1]).toMatchObject({ ok: false, error: expect.any(ValidationError) });
    expect(attempts[2]).toMatchObject({ ok: true, result: { vector: 'applied', lexical: 'applied' } });
  });

  it('indexer - a batch reads the states of its documents in one call where a backend can, else one call each', async () => {
    const deps = await setup();
    const reads = { batched: 0, single: 0 };
    const batching: VectorBackend = new Proxy(deps.vector, {
      get: (target, key, receiver) =>
        key === 'documentStates'
          ? (keys: Parameters<VectorBackend['documentState']>[0][]) => {
              reads.batched++;
              return Promise.all(keys.map((k) => target.documentState(k)));
            }
          : key === 'documentState'
            ? (k: Parameters<VectorBackend['documentState']>[0]) => {
                reads.single++;
                return target.documentState(k);
              }
            : Reflect.get(target, key, receiver),
    });
    const indexer = createIndexer({ ...deps, vector: batching });
    await indexer.applyAll(
      ['a', 'b', 'c'].map((docId) => ({ op: 'upsert', upsert: document({ docId }) })),
      never,
    );
    expect(reads).toEqual({ batched: 1, single: 0 });
    // The embedded lexical side has no batched read: it was asked once per document, and agrees.
    const attempts = await indexer.applyAll(
      ['a', 'b', 'c'].map((docId) => ({ op: 'upsert', upsert: document({ docId }) })),
      never,
    );
    expect(attempts.map((attempt) => attempt.ok && attempt.result.vector)).toEqual([
      'unchanged',
      'unchanged',
      'unchanged',
    ]);
  });

  it('indexer - a command without an id, a version or an operation is a validation error', async () => {
    const indexer = createIndexer(await setup());
    await expect(indexer.apply({ op: 'upsert', upsert: document({ docId: '' }) })).rejects.toBeInstanceOf(
      ValidationError,
    );
    await expect(indexer.apply({ op: 'upsert', upsert: document({ tenantId: '' }) })).rejects.toBeInstanceOf(
      ValidationError,
    );
    await expect(indexer.apply({ op: 'upsert', upsert: document({ version: 0 }) })).rejects.toThrow(
      /versions are integers from 1/,
    );
    await expect(indexer.apply({})).rejects.toBeInstanceOf(ValidationError);
  });

  it('indexer - a version far ahead of the clock is refused, so it cannot pin the document against later ingests and deletes', async () => {
    const deps = await setup();
    const indexer = createIndexer(deps);
    const farFuture = Date.now() + 365 * 24 * 3_600_000;
    await expect(indexer.apply({ op: 'upsert', upsert: document({ version: farFuture }) })).rejects.toThrow(
      /ahead of the clock/,
    );
    const now = Date.now();
    await expect(indexer.apply({ op: 'upsert', upsert: document({ version: now }) })).resolves.toMatchObject({
      changed: true,
    });
    const deleted = await indexer.apply({
      op: 'delete',
      delete: { tenantId: 't1', kbId: 'kb1', docId: 'policy', version: now + 1 },
    });
    expect(deleted.changed).toBe(true);
  });

  it('indexer - an embedder returning the wrong number of vectors fails the command', async () => {
    const inner = new HashingEmbedder({ dimensions: 64 });
    const short: Embedder = {
      model: 'short',
      dimensions: 64,
      embed: async () => [inner.embedOne('x'), inner.embedOne('y')],
    };
    const indexer = createIndexer(await setup(short));
    await expect(indexer.apply({ op: 'upsert', upsert: document() })).rejects.toThrow(/returned 2 vectors for 1 texts/);
  });
  it('indexer - a batch ends as the same commands one at a time, and embeds all its chunks together', async () => {
    const commands: IngestCommand__Output[] = [
      { op: 'upsert', upsert: document({ docId: 'a', text: 'Economy class for short flights.' }) },
      { op: 'upsert', upsert: document({ docId: 'b', text: 'Business class above six hours.' }) },
      { op: 'upsert', upsert: document({ docId: 'a', version: 2, text: 'Premium economy for long flights.' }) },
      { op: 'upsert', upsert: document({ docId: 'b', text: 'Business class above six hours.' }) },
      { op: 'delete', delete: { tenantId: 't1', kbId: 'kb1', docId: 'c', version: 3 } },
      { op: 'upsert', upsert: document({ docId: 'c', version: 2, text: 'A version the delete outranks.' }) },
      { op: 'upsert', upsert: document({ docId: '' }) },
      { op: 'upsert', upsert: document({ docId: 'd', text: 'Hotels up to 150 euros a night.' }) },
    ];
    const oneByOne = await setup();
    const sequential = createIndexer(oneByOne);
    const expected: unknown[] = [];
    for (const command of commands) {
      expected.push(await sequential.apply(command).catch((error: unknown) => (error as Error).constructor.name));
    }

    const embedder = countingEmbedder();
    const batched = await setup(embedder);
    const attempts = await createIndexer({ ...batched, embedder, embedBatchSize: 64 }).applyAll(commands);
    expect(
      attempts.map((attempt) => (attempt.ok ? attempt.result : (attempt.error as Error).constructor.name)),
    ).toEqual(expected);
    expect(embedder.calls).toBe(1);
    // Every upsert but the invalid one: a document written twice in a batch skips the pre-check.
    expect(embedder.texts).toBe(6);
    expect(await batched.lexical.countChunks()).toEqual(await oneByOne.lexical.countChunks());
    expect(await batched.vector.countChunks()).toEqual(await oneByOne.vector.countChunks());
    for (const docId of ['a', 'b', 'c', 'd']) {
      const key = { tenantId: 't1', kbId: 'kb1', docId };
      expect(await batched.lexical.documentState(key)).toEqual(await oneByOne.lexical.documentState(key));
      expect(await batched.vector.documentState(key)).toEqual(await oneByOne.vector.documentState(key));
    }
    const query = { scope: { tenantId: 't1', kbIds: ['kb1'] }, query: 'economy flights', limit: 5 };
    expect(await batched.lexical.search(query, never)).toEqual(await oneByOne.lexical.search(query, never));
  });
});

describe('compareChunkCounts', () => {
  it('consistency - equal counts per knowledge base are consistent', () => {
    const counts = [{ tenantId: 't', kbId: 'k', documents: 1, chunks: 3 }];
    expect(compareChunkCounts({ name: 'bm25', counts }, { name: 'vector', counts })).toMatchObject({
      consistent: true,
      gaps: [],
      messages: [],
    });
  });

  it('consistency - a gap names the knowledge base, the side behind and how to reindex', () => {
    const report = compareChunkCounts(
      { name: 'bm25', counts: [{ tenantId: 't', kbId: 'k', documents: 1, chunks: 10 }] },
      {
        name: 'vector',
        counts: [
          { tenantId: 't', kbId: 'k', documents: 1, chunks: 7 },
          { tenantId: 't', kbId: 'only-vector', documents: 1, chunks: 2 },
        ],
      },
    );
    expect(report.consistent).toBe(false);
    expect(report.gaps.map((gap) => gap.kbId)).toEqual(['k', 'only-vector']);
    expect(report.messages[0]).toMatch(
      /t\/k: bm25 holds 10 chunks, vector holds 7 \(vector is 3 behind\).*pnpm ingest/,
    );
    expect(report.messages[1]).toMatch(/bm25 is 2 behind/);
  });
});
