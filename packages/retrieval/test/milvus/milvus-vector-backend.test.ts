import { createServer } from 'node:net';
import { status as grpcStatus } from '@grpc/grpc-js';
import {
  CancelledError,
  DeadlineExceededError,
  HoplineError,
  UnavailableError,
  ValidationError,
  isInfrastructureError,
} from '@hopline/contracts';
import { afterEach, describe, expect, it } from 'vitest';
import type { EmbeddedChunk } from '../../src/index.js';
import { EmbeddedLexicalBackend, createDeadlineGuard, createHybridRetriever, createIndexer } from '../../src/index.js';
import type { MilvusSetupLog, MilvusVectorBackend, MilvusVectorBackendOptions } from '../../src/remote.js';
import { createMilvusVectorBackend } from '../../src/remote.js';
import { chunkOf, never } from '../fixtures.js';
import type { FakeMilvus, Row } from './fake-milvus.js';
import { startFakeMilvus } from './fake-milvus.js';

const DIM = 4;
const CHUNKS = 'hopline_chunks';
const RECORDS = 'hopline_chunks_documents';

const opened: Array<{ close(): Promise<void> }> = [];
// Servers first: that ends calls a test left hanging, which a client's close would wait for.
afterEach(async () => {
  for (const resource of opened.splice(0)) await resource.close();
});

async function fakeServer(): Promise<FakeMilvus> {
  const fake = await startFakeMilvus();
  opened.push(fake);
  return fake;
}

async function open(fake: FakeMilvus, options: Partial<MilvusVectorBackendOptions> = {}): Promise<MilvusVectorBackend> {
  const backend = await createMilvusVectorBackend({ address: fake.address, dimensions: DIM, ...options });
  opened.push(backend);
  return backend;
}

/** A backend on a fresh fake, with the start-up RPCs cleared from the record. */
async function started(
  options: Partial<MilvusVectorBackendOptions> = {},
): Promise<{ fake: FakeMilvus; backend: MilvusVectorBackend }> {
  const fake = await fakeServer();
  const backend = await open(fake, options);
  fake.calls.length = 0;
  return { fake, backend };
}

function vectorOf(...values: number[]): Float32Array {
  return Float32Array.from({ length: DIM }, (_, i) => values[i] ?? 0);
}

function embedded(
  docId: string,
  index: number,
  version: number,
  vector: Float32Array,
  where: { tenantId?: string; kbId?: string } = {},
): EmbeddedChunk {
  return {
    chunk: chunkOf({
      docId,
      chunkId: `${docId}#${index}`,
      docVersion: version,
      title: docId,
      text: `${docId} part ${index}`,
      ...where,
    }),
    vector,
  };
}

const key = (docId: string, version: number, where: { tenantId?: string; kbId?: string } = {}) => ({
  tenantId: 't1',
  kbId: 'kb1',
  docId,
  version,
  ...where,
});
const rowsOf = (fake: FakeMilvus, collection: string): Row[] => [
  ...(fake.collections.get(collection)?.rows.values() ?? []),
];
const chunkKeys = (fake: FakeMilvus): string[] =>
  rowsOf(fake, CHUNKS)
    .map((row) => String(row.pk))
    .sort();

const rpcsOf = (fake: FakeMilvus): string[] =>
  fake.calls.map(({ method, request }) => `${method} ${String(request.collection_name)}`);

/**
 * Lets the next upsert through (a write's chunk rows) and fails the one after it (its record)
 * as unreachable, until healed: a write whose vectors landed without their record.
 */
function failRecordUpsert(fake: FakeMilvus): void {
  fake.beforeNext('Upsert', () =>
    fake.beforeNext('Upsert', () => fake.fail('Upsert', { grpc: grpcStatus.UNAVAILABLE })),
  );
}

/** A chunk row as another writer would have left it. */
function plantChunk(fake: FakeMilvus, docId: string, index: number, version: number): void {
  const pk = `t1/kb1/${docId}%23${index}@${version}`;
  fake.collections.get(CHUNKS)?.rows.set(pk, {
    pk,
    chunk_id: `${docId}#${index}`,
    tenant_id: 't1',
    kb_id: 'kb1',
    doc_id: docId,
    doc_version: version,
    chunk: {},
    vector: [1, 0, 0, 0],
  });
}

function logRecorder(): {
  warnings: Array<{ message: string; fields?: Record<string, unknown> }>;
  log: MilvusSetupLog;
} {
  const warnings: Array<{ message: string; fields?: Record<string, unknown> }> = [];
  return {
    warnings,
    log: { info() {}, warn: (message, fields) => void warnings.push({ message, ...(fields ? { fields } : {}) }) },
  };
}

describe('milvus vector backend - start-up', () => {
  it('milvus - creates the chunks collection with the tenant as partition key and an HNSW (M 16, efConstruction 200) COSINE index, then waits for it to load', async () => {
    const fake = await fakeServer();
    fake.loadingPolls = 2;
    await open(fake);
    expect(fake.unexpected).toEqual([]);
    expect(fake.callsOf('Connect')).toHaveLength(1);
    const chunks = fake.collections.get(CHUNKS);
    const fields = Object.fromEntries((chunks?.schema.fields ?? []).map((f) => [f.name, f]));
    expect(fields.pk).toMatchObject({ data_type: 'VarChar', is_primary_key: true });
    expect(fields.tenant_id).toMatchObject({ data_type: 'VarChar', is_partition_key: true });
    for (const name of ['kb_id', 'doc_id', 'chunk_id'])
      expect(fields[name]).toMatchObject({ data_type: 'VarChar', is_partition_key: false });
    expect(fields.doc_version).toMatchObject({ data_type: 'Int64' });
    expect(fields.chunk).toMatchObject({ data_type: 'JSON' });
    expect(fields.vector).toMatchObject({
      data_type: 'FloatVector',
      type_params: [{ key: 'dim', value: String(DIM) }],
    });
    expect(chunks?.index).toEqual({
      field_name: 'vector',
      params: { index_type: 'HNSW', metric_type: 'COSINE', params: '{"M":16,"efConstruction":200}' },
    });
    const records = fake.collections.get(RECORDS);
    expect(records?.schema.fields.map((f) => f.name)).toEqual([
      'pk',
      'tenant_id',
      'kb_id',
      'doc_id',
      'doc_version',
      'deleted',
      'chunks',
      'placeholder',
    ]);
    expect(fake.callsOf('LoadCollection').map((r) => r.collection_name)).toEqual([CHUNKS, RECORDS]);
    // Loading, loading, loaded — polled, not assumed.
    expect(fake.callsOf('GetLoadState').filter((r) => r.collection_name === CHUNKS)).toHaveLength(3);
  });

  it('milvus - a restart finds both collections and keeps their vectors', async () => {
    const fake = await fakeServer();
    const first = await open(fake);
    await first.upsertDocument(key('a', 1), [embedded('a', 0, 1, vectorOf(1))]);
    fake.calls.length = 0;
    const second = await open(fake);
    expect(fake.callsOf('CreateCollection')).toEqual([]);
    expect(await second.documentState(key('a', 1))).toEqual({ version: 1, deleted: false, chunks: 1 });
  });

  it('milvus - a collection holding vectors of another length fails start-up, naming both lengths', async () => {
    const fake = await fakeServer();
    await open(fake);
    const failure = await createMilvusVectorBackend({ address: fake.address, dimensions: 1536 }).catch(
      (e: unknown) => e,
    );
    expect(failure).toBeInstanceOf(ValidationError);
    expect((failure as Error).message).toMatch(/4-dimension .* 1536/);
  });

  it('milvus - an existing index built with other parameters is kept, with a warning', async () => {
    const fake = await fakeServer();
    await open(fake);
    const { warnings, log } = logRecorder();
    await open(fake, { hnsw: { M: 32 }, log });
    expect(fake.collections.get(CHUNKS)?.index?.params.params).toBe('{"M":16,"efConstruction":200}');
    expect(warnings).toEqual([expect.objectContaining({ fields: expect.objectContaining({ collection: CHUNKS }) })]);
  });

  it('milvus - an unreachable server fails start-up with UnavailableError', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port: free } = probe.address() as { port: number };
        probe.close(() => resolve(free));
      });
    });
    await expect(createMilvusVectorBackend({ address: `127.0.0.1:${port}`, dimensions: DIM })).rejects.toBeInstanceOf(
      UnavailableError,
    );
  });

  it('milvus - a collection that never loads fails start-up with UnavailableError', async () => {
    const fake = await fakeServer();
    fake.loadingPolls = Number.POSITIVE_INFINITY;
    await expect(
      createMilvusVectorBackend({ address: fake.address, dimensions: DIM, loadTimeoutMs: 150 }),
    ).rejects.toThrow(/did not load within 150 ms/);
  });
});

describe('milvus vector backend - search', () => {
  it('milvus - searches with ef 64 under COSINE, filtered by a template on tenant and kb ids, and returns only chunks in scope', async () => {
    const { fake, backend } = await started();
    await backend.upsertDocument(key('a', 1), [embedded('a', 0, 1, vectorOf(1, 0.1))]);
    await backend.upsertDocument(key('b', 1, { kbId: 'kb2' }), [
      embedded('b', 0, 1, vectorOf(1, 0.2), { kbId: 'kb2' }),
    ]);
    await backend.upsertDocument(key('c', 1, { kbId: 'kb3' }), [embedded('c', 0, 1, vectorOf(1), { kbId: 'kb3' })]);
    await backend.upsertDocument(key('a', 1, { tenantId: 't2' }), [
      embedded('a', 0, 1, vectorOf(1), { tenantId: 't2' }),
    ]);
    fake.calls.length = 0;

    const hits = await backend.search(
      { scope: { tenantId: 't1', kbIds: ['kb1', 'kb2'] }, vector: vectorOf(1), limit: 10 },
      never,
    );
    expect(hits.map((hit) => `${hit.chunk.tenantId}/${hit.chunk.kbId}/${hit.chunk.chunkId}`)).toEqual([
      't1/kb1/a#0',
      't1/kb2/b#0',
    ]);
    expect(hits[0]?.score).toBeGreaterThan(hits[1]?.score ?? 1);
    expect(hits[0]?.chunk).toEqual(embedded('a', 0, 1, vectorOf(1)).chunk);

    const [request] = fake.callsOf('Search');
    expect(request?.dsl).toBe('tenant_id == {tenant_id} && kb_id in {kb_ids}');
    expect(request?.expr_template_values).toMatchObject({
      tenant_id: { string_val: 't1' },
      kb_ids: { array_val: { string_data: { data: ['kb1', 'kb2'] } } },
    });
    const params = Object.fromEntries(
      (request?.search_params as Array<{ key: string; value: string }>).map(({ key: k, value }) => [k, value]),
    );
    expect(params).toMatchObject({ anns_field: 'vector', metric_type: 'COSINE', topk: '10', params: '{"ef":64}' });
  });

  it('milvus - a kb id written as expression syntax is matched as a value and cannot widen the filter', async () => {
    const { fake, backend } = await started();
    await backend.upsertDocument(key('a', 1), [embedded('a', 0, 1, vectorOf(1))]);
    const hostile = 'kb1" || tenant_id != "nobody';
    expect(
      await backend.search({ scope: { tenantId: 't1', kbIds: [hostile] }, vector: vectorOf(1), limit: 5 }, never),
    ).toEqual([]);
    const request = fake.callsOf('Search').at(-1);
    expect(request?.dsl).toBe('tenant_id == {tenant_id} && kb_id in {kb_ids}');
    expect(request?.expr_template_values).toMatchObject({
      kb_ids: { array_val: { string_data: { data: [hostile] } } },
    });
    // Writes with such ids stay templates too, and land in their own kb.
    await backend.upsertDocument(key('h', 1, { kbId: hostile }), [
      embedded('h', 0, 1, vectorOf(0, 1), { kbId: hostile }),
    ]);
    await backend.deleteDocument(key('h', 1, { kbId: hostile }));
    for (const { expr } of fake.callsOf('Delete')) expect(String(expr)).not.toContain('kb1"');
    expect(chunkKeys(fake)).toEqual(['t1/kb1/a%230@1']);
  });

  it("milvus - selected documents narrow the filter by a doc id template, and another tenant's id matches nothing", async () => {
    const { fake, backend } = await started();
    await backend.upsertDocument(key('a', 1), [embedded('a', 0, 1, vectorOf(1, 0.1))]);
    await backend.upsertDocument(key('b', 1), [embedded('b', 0, 1, vectorOf(1))]);
    await backend.upsertDocument(key('c', 1, { tenantId: 't2' }), [
      embedded('c', 0, 1, vectorOf(1), { tenantId: 't2' }),
    ]);
    const search = (docIds: string[]) =>
      backend.search({ scope: { tenantId: 't1', kbIds: ['kb1'], docIds }, vector: vectorOf(1), limit: 10 }, never);
    expect((await search(['a'])).map((hit) => hit.chunk.docId)).toEqual(['a']);
    const request = fake.callsOf('Search').at(-1);
    expect(request?.dsl).toBe('tenant_id == {tenant_id} && kb_id in {kb_ids} && doc_id in {doc_ids}');
    expect(request?.expr_template_values).toMatchObject({ doc_ids: { array_val: { string_data: { data: ['a'] } } } });
    expect(await search(['c'])).toEqual([]);
  });

  it('milvus - ef grows to the number of results asked for', async () => {
    const { fake, backend } = await started();
    await backend.search({ scope: { tenantId: 't1', kbIds: ['kb1'] }, vector: vectorOf(1), limit: 100 }, never);
    const params = Object.fromEntries(
      (fake.callsOf('Search')[0]?.search_params as Array<{ key: string; value: string }>).map(({ key: k, value }) => [
        k,
        value,
      ]),
    );
    expect(params.params).toBe('{"ef":100}');
  });

  it('milvus - a query vector of the wrong length or a scope without kb fails before anything is sent', async () => {
    const { fake, backend } = await started();
    await expect(
      backend.search({ scope: { tenantId: 't1', kbIds: ['kb1'] }, vector: new Float32Array(3), limit: 5 }, never),
    ).rejects.toBeInstanceOf(ValidationError);
    await expect(
      backend.search({ scope: { tenantId: 't1', kbIds: [] }, vector: vectorOf(1), limit: 5 }, never),
    ).rejects.toBeInstanceOf(ValidationError);
    expect(fake.calls).toEqual([]);
  });
});

describe('milvus vector backend - versioned writes', () => {
  it('milvus - upserts each chunk version under its own key with its scope fields, then records the version', async () => {
    const { fake, backend } = await started();
    expect(
      await backend.upsertDocument(key('a', 5), [
        embedded('a', 0, 5, vectorOf(1)),
        embedded('a', 1, 5, vectorOf(0, 1)),
      ]),
    ).toBe('applied');
    const upserts = fake.callsOf('Upsert');
    expect(upserts.map((r) => r.collection_name)).toEqual([CHUNKS, RECORDS]);
    expect(upserts[0]?.num_rows).toBe(2);
    expect(rowsOf(fake, CHUNKS)).toEqual([
      expect.objectContaining({
        pk: 't1/kb1/a%230@5',
        chunk_id: 'a#0',
        tenant_id: 't1',
        kb_id: 'kb1',
        doc_id: 'a',
        doc_version: 5,
        vector: [1, 0, 0, 0],
      }),
      expect.objectContaining({ pk: 't1/kb1/a%231@5', chunk_id: 'a#1', doc_version: 5 }),
    ]);
    expect(rowsOf(fake, RECORDS)).toEqual([
      expect.objectContaining({ pk: 't1/kb1/a@5', doc_version: 5, deleted: false, chunks: 2 }),
    ]);
    // A first version has nothing older to remove.
    expect(fake.callsOf('Delete')).toEqual([]);
  });

  it('milvus - a newer version removes the older vectors and records; the older one arriving later changes nothing', async () => {
    const { fake, backend } = await started();
    await backend.upsertDocument(key('a', 1), [embedded('a', 0, 1, vectorOf(1)), embedded('a', 1, 1, vectorOf(0, 1))]);
    expect(await backend.upsertDocument(key('a', 2), [embedded('a', 0, 2, vectorOf(0, 0, 1))])).toBe('applied');
    expect(chunkKeys(fake)).toEqual(['t1/kb1/a%230@2']);
    expect(rowsOf(fake, RECORDS).map((row) => row.pk)).toEqual(['t1/kb1/a@2']);
    // The replaced rows are found by one query of the document's chunk keys and deleted by key.
    const cleanup = fake.callsOf('Delete').find((r) => r.collection_name === CHUNKS);
    expect(cleanup?.expr).toBe('pk in {pks}');
    expect(cleanup?.expr_template_values).toMatchObject({
      pks: { array_val: { string_data: { data: ['t1/kb1/a%230@1', 't1/kb1/a%231@1'] } } },
    });

    fake.calls.length = 0;
    expect(await backend.upsertDocument(key('a', 1), [embedded('a', 0, 1, vectorOf(1))])).toBe('stale');
    expect(await backend.upsertDocument(key('a', 2), [embedded('a', 0, 2, vectorOf(0, 0, 1))])).toBe('unchanged');
    expect(fake.callsOf('Upsert')).toEqual([]);
    expect(chunkKeys(fake)).toEqual(['t1/kb1/a%230@2']);
  });

  it('milvus - a delete removes the vectors up to its version and keeps older upserts out; a newer version comes back', async () => {
    const { fake, backend } = await started();
    await backend.upsertDocument(key('a', 3), [embedded('a', 0, 3, vectorOf(1))]);
    expect(await backend.deleteDocument(key('a', 3))).toBe('applied');
    expect(chunkKeys(fake)).toEqual([]);
    expect(await backend.documentState(key('a', 3))).toEqual({ version: 3, deleted: true, chunks: 0 });
    expect(fake.callsOf('Delete').find((r) => r.collection_name === CHUNKS)?.expr_template_values).toMatchObject({
      pks: { array_val: { string_data: { data: ['t1/kb1/a%230@3'] } } },
    });
    expect(await backend.deleteDocument(key('a', 2))).toBe('unchanged');
    expect(await backend.upsertDocument(key('a', 3), [embedded('a', 0, 3, vectorOf(1))])).toBe('stale');
    expect(await backend.upsertDocument(key('a', 4), [embedded('a', 0, 4, vectorOf(1))])).toBe('applied');
    expect(chunkKeys(fake)).toEqual(['t1/kb1/a%230@4']);
    expect(rowsOf(fake, RECORDS).map((row) => row.pk)).toEqual(['t1/kb1/a@4']);
  });

  it('milvus - a write that loses to a newer version recorded meanwhile takes its own vectors back', async () => {
    const { fake, backend } = await started();
    // Another worker's version 2 lands between this write's check and its record.
    fake.beforeNext('Upsert', () => {
      fake.collections.get(CHUNKS)?.rows.set('t1/kb1/a%230@2', {
        pk: 't1/kb1/a%230@2',
        chunk_id: 'a#0',
        tenant_id: 't1',
        kb_id: 'kb1',
        doc_id: 'a',
        doc_version: 2,
        chunk: {},
        vector: [0, 1, 0, 0],
      });
      fake.collections.get(RECORDS)?.rows.set('t1/kb1/a@2', {
        pk: 't1/kb1/a@2',
        tenant_id: 't1',
        kb_id: 'kb1',
        doc_id: 'a',
        doc_version: 2,
        deleted: false,
        chunks: 1,
        placeholder: [1, 0],
      });
    });
    expect(
      await backend.upsertDocument(key('a', 1), [embedded('a', 0, 1, vectorOf(1)), embedded('a', 1, 1, vectorOf(1))]),
    ).toBe('stale');
    expect(chunkKeys(fake)).toEqual(['t1/kb1/a%230@2']);
    expect(rowsOf(fake, RECORDS).map((row) => row.pk)).toEqual(['t1/kb1/a@2']);
    expect(await backend.documentState(key('a', 1))).toEqual({ version: 2, deleted: false, chunks: 1 });
  });

  it('milvus - a write that sees an older version recorded meanwhile removes that version too', async () => {
    const { fake, backend } = await started();
    const older = [
      {
        pk: 't1/kb1/a%239@1',
        chunk_id: 'a#9',
        tenant_id: 't1',
        kb_id: 'kb1',
        doc_id: 'a',
        doc_version: 1,
        chunk: {},
        vector: [1, 0, 0, 0],
      },
    ];
    // A stale worker's rows for version 1 land between this write's check and its record.
    fake.beforeNext('Upsert', () => {
      for (const row of older) fake.collections.get(CHUNKS)?.rows.set(row.pk, row);
      fake.collections.get(RECORDS)?.rows.set('t1/kb1/a@1', {
        pk: 't1/kb1/a@1',
        tenant_id: 't1',
        kb_id: 'kb1',
        doc_id: 'a',
        doc_version: 1,
        deleted: false,
        chunks: 1,
        placeholder: [1, 0],
      });
    });
    expect(await backend.upsertDocument(key('a', 2), [embedded('a', 0, 2, vectorOf(0, 1))])).toBe('applied');
    expect(chunkKeys(fake)).toEqual(['t1/kb1/a%230@2']);
    expect(rowsOf(fake, RECORDS).map((row) => row.pk)).toEqual(['t1/kb1/a@2']);
  });

  it('milvus - vectors whose record was never written go with their redelivery, stale after a newer version recorded as a first one', async () => {
    const { fake, backend } = await started();
    const first = () =>
      backend.upsertDocument(key('a', 1), [embedded('a', 0, 1, vectorOf(1)), embedded('a', 1, 1, vectorOf(0, 1))]);
    // Version 1 lands its rows but not its record: its message will be redelivered.
    failRecordUpsert(fake);
    await expect(first()).rejects.toBeInstanceOf(UnavailableError);
    fake.heal('Upsert');
    expect(chunkKeys(fake)).toEqual(['t1/kb1/a%230@1', 't1/kb1/a%231@1']);
    expect(rowsOf(fake, RECORDS)).toEqual([]);
    // Version 2 finds no record, so it is a first version and looks for nothing older.
    expect(await backend.upsertDocument(key('a', 2), [embedded('a', 0, 2, vectorOf(0, 0, 1))])).toBe('applied');
    expect(chunkKeys(fake)).toEqual(['t1/kb1/a%230@1', 't1/kb1/a%230@2', 't1/kb1/a%231@1']);
    // The redelivery of version 1 is stale, and takes its rows with it: one query of the keys, one delete.
    fake.calls.length = 0;
    expect(await first()).toBe('stale');
    expect(chunkKeys(fake)).toEqual(['t1/kb1/a%230@2']);
    expect(rpcsOf(fake)).toEqual([`Query ${RECORDS}`, `Query ${CHUNKS}`, `Delete ${CHUNKS}`]);
    // Once more: nothing older is found, so nothing is deleted.
    fake.calls.length = 0;
    expect(await first()).toBe('stale');
    expect(rpcsOf(fake)).toEqual([`Query ${RECORDS}`, `Query ${CHUNKS}`]);
    // The version recorded, again: its rows all landed before its record, nothing to look for.
    fake.calls.length = 0;
    expect(await backend.upsertDocument(key('a', 2), [embedded('a', 0, 2, vectorOf(0, 0, 1))])).toBe('unchanged');
    expect(rpcsOf(fake)).toEqual([`Query ${RECORDS}`]);
  });

  it("milvus - a stale upsert after a delete removes vectors up to the delete's version, never a newer writer's", async () => {
    const { fake, backend } = await started();
    expect(await backend.deleteDocument(key('a', 3))).toBe('applied');
    // After the delete's cleanup: rows of versions 2 and 3 whose writers died before their
    // records, and a row of version 4 whose writer has yet to record it.
    plantChunk(fake, 'a', 1, 2);
    plantChunk(fake, 'a', 2, 3);
    plantChunk(fake, 'a', 0, 4);
    expect(await backend.upsertDocument(key('a', 2), [embedded('a', 1, 2, vectorOf(1))])).toBe('stale');
    expect(chunkKeys(fake)).toEqual(['t1/kb1/a%230@4']);
    expect(await backend.documentState(key('a', 2))).toEqual({ version: 3, deleted: true, chunks: 0 });
  });

  it('milvus - chunks of another document or with vectors of the wrong length are refused before anything is written', async () => {
    const { fake, backend } = await started();
    await expect(backend.upsertDocument(key('a', 1), [embedded('b', 0, 1, vectorOf(1))])).rejects.toBeInstanceOf(
      ValidationError,
    );
    await expect(backend.upsertDocument(key('a', 1), [embedded('a', 0, 2, vectorOf(1))])).rejects.toBeInstanceOf(
      ValidationError,
    );
    await expect(
      backend.upsertDocument(key('a', 1), [{ ...embedded('a', 0, 1, vectorOf(1)), vector: new Float32Array(DIM + 1) }]),
    ).rejects.toBeInstanceOf(ValidationError);
    await expect(backend.upsertDocument(key('a'.repeat(600), 1), [])).rejects.toBeInstanceOf(ValidationError);
    expect(fake.callsOf('Upsert')).toEqual([]);
  });
});

describe('milvus vector backend - batch writes', () => {
  const docs = Array.from({ length: 20 }, (_, i) => key(`d${i}`, 3));
  const upserts = (version: number, chunks = 2) =>
    docs.map(({ docId }) => ({
      op: 'upsert' as const,
      doc: key(docId, version),
      items: Array.from({ length: chunks }, (_, n) => embedded(docId, n, version, vectorOf(1, n))),
    }));
  const rpcs = rpcsOf;

  it('milvus - twenty two-chunk documents in one batch are one record query, one chunk upsert, one record upsert and one read-back', async () => {
    const { fake, backend } = await started();
    expect(await backend.writeDocuments(upserts(3))).toEqual(docs.map(() => 'applied'));
    expect(rpcs(fake)).toEqual([`Query ${RECORDS}`, `Upsert ${CHUNKS}`, `Upsert ${RECORDS}`, `Query ${RECORDS}`]);
    const [read] = fake.callsOf('Query');
    expect(read?.expr).toBe('tenant_id == {tenant_id} && kb_id == {kb_id} && doc_id in {doc_ids} && pk > {after}');
    expect(read?.expr_template_values).toMatchObject({
      doc_ids: { array_val: { string_data: { data: docs.map(({ docId }) => docId) } } },
    });
    expect(fake.callsOf('Upsert').map((r) => r.num_rows)).toEqual([40, 20]);
    expect(chunkKeys(fake)).toHaveLength(40);
    expect(await backend.documentState(key('d7', 3))).toEqual({ version: 3, deleted: false, chunks: 2 });
  });

  it('milvus - replacing twenty documents finds their old chunks in one query and deletes them, and the old records, by key', async () => {
    const { fake, backend } = await started();
    await backend.writeDocuments(upserts(3));
    fake.calls.length = 0;
    expect(await backend.writeDocuments(upserts(4, 1))).toEqual(docs.map(() => 'applied'));
    expect(rpcs(fake)).toEqual([
      `Query ${RECORDS}`,
      `Query ${CHUNKS}`,
      `Upsert ${CHUNKS}`,
      `Delete ${CHUNKS}`,
      `Upsert ${RECORDS}`,
      `Query ${RECORDS}`,
      `Delete ${RECORDS}`,
    ]);
    const [chunkDelete, recordDelete] = fake.callsOf('Delete');
    expect(chunkDelete?.expr).toBe('pk in {pks}');
    expect(
      (chunkDelete?.expr_template_values as { pks: { array_val: { string_data: { data: string[] } } } }).pks.array_val
        .string_data.data,
    ).toHaveLength(40);
    expect(recordDelete?.expr).toBe('pk in {pks}');
    expect(chunkKeys(fake)).toEqual(docs.map(({ docId }) => `t1/kb1/${docId}%230@4`).sort());
    expect(rowsOf(fake, RECORDS).map((row) => row.pk)).toEqual(docs.map(({ docId }) => `t1/kb1/${docId}@4`));
  });

  it('milvus - a batch over several kbs reads each kb once; deletes, stale and unchanged writes are decided from the same read', async () => {
    const { fake, backend } = await started();
    await backend.writeDocuments([
      { op: 'upsert', doc: key('a', 2), items: [embedded('a', 0, 2, vectorOf(1))] },
      { op: 'upsert', doc: key('b', 1), items: [embedded('b', 0, 1, vectorOf(1))] },
    ]);
    fake.calls.length = 0;
    const other = { tenantId: 't2', kbId: 'kb9' };
    const results = await backend.writeDocuments([
      { op: 'upsert', doc: key('a', 1), items: [embedded('a', 0, 1, vectorOf(1))] },
      { op: 'upsert', doc: key('b', 1), items: [embedded('b', 0, 1, vectorOf(1))] },
      { op: 'delete', doc: key('a', 2) },
      { op: 'upsert', doc: key('c', 1, other), items: [embedded('c', 0, 1, vectorOf(1), other)] },
    ]);
    // The delete of a waits for the second round: it is decided after a's first write.
    expect(results).toEqual(['stale', 'unchanged', 'applied', 'applied']);
    const reads = fake.callsOf('Query').filter((r) => r.collection_name === RECORDS);
    expect(reads.map((r) => (r.expr_template_values as { kb_id: { string_val: string } }).kb_id.string_val)).toEqual([
      'kb1',
      'kb9',
      'kb9',
      'kb1',
      'kb1',
    ]);
    expect(chunkKeys(fake)).toEqual(['t1/kb1/b%230@1', 't2/kb9/c%230@1']);
    expect(await backend.documentState(key('a', 2))).toEqual({ version: 2, deleted: true, chunks: 0 });
  });

  it('milvus - the states of a batch are one query per kb, in the order asked, unknown documents undefined', async () => {
    const { fake, backend } = await started();
    await backend.writeDocuments(upserts(3).slice(0, 2));
    await backend.deleteDocument(key('d1', 5));
    fake.calls.length = 0;
    expect(
      await backend.documentStates([key('d1', 0), key('zz', 0), key('d0', 0), key('d0', 0, { kbId: 'kb2' })]),
    ).toEqual([
      { version: 5, deleted: true, chunks: 0 },
      undefined,
      { version: 3, deleted: false, chunks: 2 },
      undefined,
    ]);
    expect(rpcs(fake)).toEqual([`Query ${RECORDS}`, `Query ${RECORDS}`]);
  });

  it('milvus - through the indexer, twenty ingest commands are five Milvus requests: the states, then the batch write', async () => {
    const { fake, backend } = await started();
    const lexical = await EmbeddedLexicalBackend.open();
    const embedder = {
      model: 'fixed',
      dimensions: DIM,
      embed: async (texts: readonly string[]) => texts.map(() => vectorOf(1)),
    };
    const indexer = createIndexer({ lexical, vector: backend, embedder });
    const attempts = await indexer.applyAll(
      docs.map(({ docId }) => ({
        op: 'upsert',
        upsert: {
          tenantId: 't1',
          kbId: 'kb1',
          docId,
          version: 3,
          title: docId,
          text: `The text of ${docId}.`,
          effectiveDate: '',
          sourceUri: '',
          metadata: {},
        },
      })),
      never,
    );
    expect(attempts.every((attempt) => attempt.ok)).toBe(true);
    expect(rpcs(fake)).toEqual([
      `Query ${RECORDS}`,
      `Query ${RECORDS}`,
      `Upsert ${CHUNKS}`,
      `Upsert ${RECORDS}`,
      `Query ${RECORDS}`,
    ]);
    await lexical.close();
  });

  it('milvus - upserts are split at upsertBatchSize rows', async () => {
    const { fake, backend } = await started({ upsertBatchSize: 15 });
    expect(await backend.writeDocuments(upserts(3))).toEqual(docs.map(() => 'applied'));
    expect(fake.callsOf('Upsert').map((r) => `${String(r.collection_name)} ${String(r.num_rows)}`)).toEqual([
      `${CHUNKS} 15`,
      `${CHUNKS} 15`,
      `${CHUNKS} 10`,
      `${RECORDS} 15`,
      `${RECORDS} 5`,
    ]);
    expect(chunkKeys(fake)).toHaveLength(40);
  });

  it('milvus - an upsert batch size that is not a positive integer fails start-up', async () => {
    const fake = await fakeServer();
    await expect(
      createMilvusVectorBackend({ address: fake.address, dimensions: DIM, upsertBatchSize: 0 }),
    ).rejects.toThrow(/upsertBatchSize must be a positive integer, got 0/);
  });

  it('milvus - a document with vectors of the wrong length fails alone; the rest of the batch is written in the same requests', async () => {
    const { fake, backend } = await started();
    const writes = upserts(3);
    const bad = writes[3] as (typeof writes)[number];
    writes[3] = { ...bad, items: [{ ...(bad.items[0] as EmbeddedChunk), vector: new Float32Array(DIM + 1) }] };
    const results = await backend.writeDocuments(writes);
    expect(results[3]).toBeInstanceOf(ValidationError);
    expect(String(results[3])).toMatch(/chunk d3#0 has 5 dimensions/);
    expect(results.filter((result) => result === 'applied')).toHaveLength(19);
    expect(fake.callsOf('Upsert').map((r) => r.num_rows)).toEqual([38, 19]);
    expect(await backend.documentState(key('d3', 3))).toBeUndefined();
  });

  it('milvus - a document Milvus refuses fails alone: the refused request is sent again one document at a time', async () => {
    const { fake, backend } = await started();
    fake.refuseRows(CHUNKS, (row) => row.doc_id === 'd2');
    const writes = upserts(3).slice(0, 5);
    const results = await backend.writeDocuments(writes);
    expect(results[2]).toBeInstanceOf(ValidationError);
    expect(String(results[2])).toMatch(/writing vectors of d2: .*invalid row t1\/kb1\/d2%230@3/);
    expect(results.filter((result) => result === 'applied')).toHaveLength(4);
    // The whole request, then each document's rows alone.
    expect(fake.callsOf('Upsert').map((r) => r.num_rows)).toEqual([10, 2, 2, 2, 2, 2, 4]);
    expect(rowsOf(fake, RECORDS).map((row) => row.doc_id)).toEqual(['d0', 'd1', 'd3', 'd4']);
    // An unreachable server is no document's fault: the whole batch fails, to be retried.
    fake.fail('Upsert', { grpc: grpcStatus.UNAVAILABLE });
    await expect(backend.writeDocuments(upserts(4).slice(0, 5))).rejects.toBeInstanceOf(UnavailableError);
  });

  it('milvus - in a batch, a stale upsert whose vectors landed without their record takes them back, in the query and delete of the replaced versions', async () => {
    const { fake, backend } = await started();
    const writes = upserts(3);
    await backend.writeDocuments(writes.slice(0, 1));
    // d1's version 3 lands its rows but not its record; then its version 5 is applied as a first version.
    failRecordUpsert(fake);
    await expect(backend.writeDocuments(writes.slice(1, 2))).rejects.toBeInstanceOf(UnavailableError);
    fake.heal('Upsert');
    expect(await backend.writeDocuments([upserts(5, 1)[1] as (typeof writes)[number]])).toEqual(['applied']);
    expect(chunkKeys(fake)).toContain('t1/kb1/d1%231@3');
    fake.calls.length = 0;
    // d0 replaced, d1's version 3 redelivered, d2 new.
    const results = await backend.writeDocuments([upserts(4, 1)[0], writes[1], writes[2]] as typeof writes);
    expect(results).toEqual(['applied', 'stale', 'applied']);
    expect(rpcsOf(fake)).toEqual([
      `Query ${RECORDS}`,
      `Query ${CHUNKS}`,
      `Upsert ${CHUNKS}`,
      `Delete ${CHUNKS}`,
      `Upsert ${RECORDS}`,
      `Query ${RECORDS}`,
      `Delete ${RECORDS}`,
    ]);
    const keysRead = fake.callsOf('Query').find((r) => r.collection_name === CHUNKS);
    expect(keysRead?.expr_template_values).toMatchObject({
      doc_ids: { array_val: { string_data: { data: ['d0', 'd1'] } } },
    });
    expect(chunkKeys(fake)).toEqual(['t1/kb1/d0%230@4', 't1/kb1/d1%230@5', 't1/kb1/d2%230@3', 't1/kb1/d2%231@3']);
  });

  it('milvus - in a batch, a write that loses to a newer version recorded meanwhile is stale and takes its own vectors back', async () => {
    const { fake, backend } = await started();
    // Another worker records d1 version 9 between this batch's check and its records.
    fake.beforeNext('Upsert', () => {
      fake.collections.get(RECORDS)?.rows.set('t1/kb1/d1@9', {
        pk: 't1/kb1/d1@9',
        tenant_id: 't1',
        kb_id: 'kb1',
        doc_id: 'd1',
        doc_version: 9,
        deleted: false,
        chunks: 0,
        placeholder: [1, 0],
      });
    });
    expect(await backend.writeDocuments(upserts(3).slice(0, 3))).toEqual(['applied', 'stale', 'applied']);
    expect(chunkKeys(fake)).toEqual(['t1/kb1/d0%230@3', 't1/kb1/d0%231@3', 't1/kb1/d2%230@3', 't1/kb1/d2%231@3']);
    expect(rowsOf(fake, RECORDS).map((row) => row.pk)).toEqual(['t1/kb1/d1@9', 't1/kb1/d0@3', 't1/kb1/d2@3']);
  });
});

describe('milvus vector backend - counts', () => {
  it('milvus - counts vectors per knowledge base with count(*) inside each tenant and kb, listing kbs page by page', async () => {
    const { fake, backend } = await started();
    await backend.upsertDocument(key('a', 1), [embedded('a', 0, 1, vectorOf(1)), embedded('a', 1, 1, vectorOf(1))]);
    await backend.upsertDocument(key('b', 1, { tenantId: 't2', kbId: 'kb9' }), [
      embedded('b', 0, 1, vectorOf(1), { tenantId: 't2', kbId: 'kb9' }),
    ]);
    // Enough live records to need a second page of the kb listing (16,384 rows a page).
    const records = fake.collections.get(RECORDS)?.rows;
    for (let i = 0; i < 16_400; i++) {
      const pk = `t1/kb1/filler${String(i).padStart(5, '0')}@1`;
      records?.set(pk, {
        pk,
        tenant_id: 't1',
        kb_id: 'kb1',
        doc_id: `filler${i}`,
        doc_version: 1,
        deleted: false,
        chunks: 0,
        placeholder: [1, 0],
      });
    }
    fake.calls.length = 0;
    expect(await backend.countChunks()).toEqual([
      { tenantId: 't1', kbId: 'kb1', documents: 16_401, chunks: 2 },
      { tenantId: 't2', kbId: 'kb9', documents: 1, chunks: 1 },
    ]);
    const listings = fake.callsOf('Query').filter((r) => r.collection_name === RECORDS);
    expect(listings.map((r) => r.expr)).toEqual([
      'deleted == false && pk > {after}',
      'deleted == false && pk > {after}',
    ]);
    expect(listings[0]?.expr_template_values).toMatchObject({ after: { string_val: '' } });
    expect(listings[1]?.expr_template_values).toMatchObject({ after: { string_val: 't1/kb1/filler16382@1' } });
    const counts = fake.callsOf('Query').filter((r) => r.collection_name === CHUNKS);
    expect(counts.map((r) => [r.expr, r.output_fields])).toEqual([
      ['tenant_id == {tenant_id} && kb_id == {kb_id}', ['count(*)']],
      ['tenant_id == {tenant_id} && kb_id == {kb_id}', ['count(*)']],
    ]);
  });
});

describe('milvus vector backend - failures', () => {
  const search = (backend: MilvusVectorBackend, signal = never): Promise<unknown> =>
    backend.search({ scope: { tenantId: 't1', kbIds: ['kb1'] }, vector: vectorOf(1), limit: 5 }, signal);

  it.each([
    [
      'gRPC UNAVAILABLE becomes UnavailableError, counted by the breaker',
      { grpc: grpcStatus.UNAVAILABLE },
      UnavailableError,
      true,
    ],
    [
      'gRPC DEADLINE_EXCEEDED becomes DeadlineExceededError, counted by the breaker',
      { grpc: grpcStatus.DEADLINE_EXCEEDED },
      DeadlineExceededError,
      true,
    ],
    [
      'a Milvus parameter error (1100) becomes ValidationError, not counted',
      { status: { error_code: 'UnexpectedError', code: 1100, reason: 'invalid parameter' } },
      ValidationError,
      false,
    ],
    [
      'a retriable Milvus error becomes UnavailableError, counted',
      { status: { error_code: 'UnexpectedError', code: 2, reason: 'service unavailable', retriable: true } },
      UnavailableError,
      true,
    ],
    [
      'any other Milvus error is internal, counted',
      { status: { error_code: 'UnexpectedError', code: 65535, reason: 'segment lost' } },
      HoplineError,
      true,
    ],
  ] as const)('milvus - %s', async (_case, fault, errorClass, infrastructure) => {
    const { fake, backend } = await started();
    fake.fail('Search', fault);
    const failure = await search(backend).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(errorClass);
    expect(isInfrastructureError(failure)).toBe(infrastructure);
  });

  it('milvus - an aborted search gives up at once with the signal reason, however long Milvus takes', async () => {
    const { fake, backend } = await started();
    fake.fail('Search', 'hang');
    const controller = new AbortController();
    const pending = search(backend, controller.signal).catch((e: unknown) => e);
    await expect.poll(() => fake.callsOf('Search').length).toBe(1);
    controller.abort(new DeadlineExceededError('retrieval deadline'));
    expect(await pending).toBeInstanceOf(DeadlineExceededError);
    const cancelled = new AbortController();
    cancelled.abort();
    await expect(search(backend, cancelled.signal)).rejects.toBeInstanceOf(CancelledError);
  });

  it('milvus - an RPC past its own deadline becomes DeadlineExceededError', async () => {
    const { fake, backend } = await started({ requestTimeoutMs: 100 });
    fake.fail('Search', 'hang');
    await expect(search(backend)).rejects.toBeInstanceOf(DeadlineExceededError);
  });

  it('milvus - a failed write is an error, so the ingest consumer retries it', async () => {
    const { fake, backend } = await started();
    fake.fail('Upsert', { grpc: grpcStatus.UNAVAILABLE });
    await expect(backend.upsertDocument(key('a', 1), [embedded('a', 0, 1, vectorOf(1))])).rejects.toBeInstanceOf(
      UnavailableError,
    );
    fake.heal('Upsert');
    expect(await backend.upsertDocument(key('a', 1), [embedded('a', 0, 1, vectorOf(1))])).toBe('applied');
  });

  it('milvus - when Milvus is down the hybrid retriever answers from BM25 alone and says why', async () => {
    const { fake, backend } = await started();
    fake.fail('Search', { grpc: grpcStatus.UNAVAILABLE });
    const lexical = await EmbeddedLexicalBackend.open();
    await lexical.upsertDocument(key('lh', 1), [chunkOf({ docId: 'lh', text: 'the lighthouse keeper' })]);
    const embedder = {
      model: 'fixed',
      dimensions: DIM,
      embed: async (texts: readonly string[]) => texts.map(() => vectorOf(1)),
    };
    const guard = createDeadlineGuard();
    const retriever = createHybridRetriever({
      lexical,
      vector: backend,
      embedder,
      lexicalGuard: guard,
      vectorGuard: guard,
    });
    const result = await retriever.retrieve({
      query: 'lighthouse keeper',
      scope: { tenantId: 't1', kbIds: ['kb1'] },
      hop: 1,
      deadlineUnixMs: Date.now() + 5_000,
    });
    expect(result.degraded).toBe(true);
    expect(result.degradedReasons).toEqual([expect.stringMatching(/^milvus search failed \(unavailable\)/)]);
    expect(result.chunks.map((c) => [c.docId, c.foundBy])).toEqual([['lh', 'BM25']]);
    await lexical.close();
  });
});
