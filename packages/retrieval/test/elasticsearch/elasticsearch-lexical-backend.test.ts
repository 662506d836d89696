import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, errors } from '@elastic/elasticsearch';
import {
  CancelledError,
  DeadlineExceededError,
  HoplineError,
  UnavailableError,
  ValidationError,
  isInfrastructureError,
} from '@hopline/contracts';
import { afterEach, describe, expect, it } from 'vitest';
import {
  EmbeddedVectorBackend,
  HashingEmbedder,
  createDeadlineGuard,
  createHybridRetriever,
  createIndexer,
  type Indexer,
} from '../../src/index.js';
import { ElasticsearchLexicalBackend, createElasticsearchLexicalBackend } from '../../src/remote.js';
import type { DocumentWrite, IndexedChunk } from '../../src/index.js';
import { chunkOf, never } from '../fixtures.js';
import type { RecordedRequest } from './es-mock.js';
import { esMock, responseError, silentLog } from './es-mock.js';

const INDEX = 'hopline-chunks';
const RECORDS = 'hopline-chunks-documents';
const doc = { tenantId: 't1', kbId: 'kb1', docId: 'rfc', version: 7 };
const recordPath = `/${RECORDS}/_doc/t1/kb1/rfc`;

function logRecorder(): {
  lines: Array<{ level: string; message: string; fields?: Record<string, unknown> }>;
  log: typeof silentLog;
} {
  const lines: Array<{ level: string; message: string; fields?: Record<string, unknown> }> = [];
  return {
    lines,
    log: {
      info: (message: string, fields?: Record<string, unknown>) =>
        void lines.push({ level: 'info', message, ...(fields ? { fields } : {}) }),
      warn: (message: string, fields?: Record<string, unknown>) =>
        void lines.push({ level: 'warn', message, ...(fields ? { fields } : {}) }),
    },
  };
}

async function started(es: ReturnType<typeof esMock>): Promise<ElasticsearchLexicalBackend> {
  const backend = await createElasticsearchLexicalBackend({ client: es.client, log: silentLog });
  es.requests.length = 0;
  return backend;
}

function recordReply(state: { doc_version: number; deleted: boolean; chunks: number } | undefined): () => unknown {
  return () =>
    state
      ? {
          _index: RECORDS,
          _id: 't1/kb1/rfc',
          found: true,
          _version: state.doc_version * 2,
          _source: { tenant_id: 't1', kb_id: 'kb1', doc_id: 'rfc', ...state },
        }
      : { _index: RECORDS, _id: 't1/kb1/rfc', found: false };
}

const chunks = [
  chunkOf({
    docId: 'rfc',
    chunkId: 'rfc#0',
    docVersion: 7,
    title: 'RFC 7231',
    text: 'HTTP semantics',
    lexicalText: 'HTTP semantics and content',
    entities: ['rfc 7231', 'http'],
  }),
  chunkOf({
    docId: 'rfc',
    chunkId: 'rfc#1',
    docVersion: 7,
    title: 'RFC 7231',
    text: 'top_p is not here',
    span: { start: 15, end: 32 },
  }),
];

describe('elasticsearch lexical backend - start-up', () => {
  it('elasticsearch - creates the chunks index with BM25(k1, b), smartcn on title and body, keyword scope fields and a long doc_version', async () => {
    const es = esMock();
    const { lines, log } = logRecorder();
    const backend = await createElasticsearchLexicalBackend({ client: es.client, bm25: { k1: 1.2, b: 0.6 }, log });
    expect(backend.analyzer).toBe('smartcn');
    expect(es.sent('POST', '/_analyze')[0]?.body).toMatchObject({ analyzer: 'smartcn' });
    const created = es.sent('PUT', `/${INDEX}`)[0]?.body as {
      settings: unknown;
      mappings: { dynamic: string; properties: Record<string, unknown> };
    };
    expect(created.settings).toEqual({ index: { similarity: { hopline_bm25: { type: 'BM25', k1: 1.2, b: 0.6 } } } });
    expect(created.mappings.dynamic).toBe('strict');
    expect(created.mappings.properties).toMatchObject({
      tenant_id: { type: 'keyword' },
      kb_id: { type: 'keyword' },
      doc_id: { type: 'keyword' },
      chunk_id: { type: 'keyword' },
      doc_version: { type: 'long' },
      title: { type: 'text', analyzer: 'smartcn', similarity: 'hopline_bm25' },
      body: { type: 'text', analyzer: 'smartcn', similarity: 'hopline_bm25' },
      text: { type: 'text', index: false },
      entities: { type: 'keyword' },
      whole_terms: { type: 'text', analyzer: 'whitespace', similarity: 'hopline_bm25' },
    });
    const records = es.sent('PUT', `/${RECORDS}`)[0]?.body as { mappings: { properties: Record<string, unknown> } };
    expect(records.mappings.properties).toMatchObject({
      doc_version: { type: 'long' },
      deleted: { type: 'boolean' },
      chunks: { type: 'integer' },
      changed_at: { type: 'long' },
    });
    expect(lines).toContainEqual(expect.objectContaining({ level: 'info', fields: { analyzer: 'smartcn' } }));
  });

  it('elasticsearch - falls back to the standard analyzer when the cluster has no smartcn, and says so', async () => {
    const es = esMock();
    es.on('POST', '/_analyze', () =>
      responseError(400, 'illegal_argument_exception', 'failed to find global analyzer [smartcn]'),
    );
    const { lines, log } = logRecorder();
    const backend = await createElasticsearchLexicalBackend({ client: es.client, log });
    expect(backend.analyzer).toBe('standard');
    const created = es.sent('PUT', `/${INDEX}`)[0]?.body as {
      mappings: { properties: Record<string, { analyzer?: string }> };
    };
    expect(created.mappings.properties.body?.analyzer).toBe('standard');
    expect(created.mappings.properties.title?.analyzer).toBe('standard');
    expect(lines).toContainEqual(expect.objectContaining({ level: 'warn', fields: { analyzer: 'standard' } }));
  });

  it('elasticsearch - keeps an existing index and warns when it was created with other k1/b or analyzer', async () => {
    const es = esMock();
    es.on('HEAD', '/:index', () => '');
    es.on('GET', '/:index', () => ({
      [INDEX]: {
        settings: { index: { similarity: { hopline_bm25: { type: 'BM25', k1: '1.2', b: '0.75' } } } },
        mappings: { properties: { body: { type: 'text', analyzer: 'smartcn' } } },
      },
    }));
    const { lines, log } = logRecorder();
    await createElasticsearchLexicalBackend({ client: es.client, log });
    expect(es.sent('PUT', `/${INDEX}`)).toEqual([]);
    // The entity graph's and the whole terms' fields are added to indexes created before them.
    expect(es.sent('PUT', `/${INDEX}/_mapping`)[0]?.body).toEqual({
      properties: {
        entities: { type: 'keyword' },
        whole_terms: { type: 'text', analyzer: 'whitespace', similarity: 'hopline_bm25' },
      },
    });
    expect(es.sent('PUT', `/${RECORDS}/_mapping`)[0]?.body).toEqual({ properties: { changed_at: { type: 'long' } } });
    // Its chunks have no whole terms until written again: said once, at the start that adds the field.
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        message: expect.stringContaining('predates the whole date and article terms'),
      }),
    );
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        fields: expect.objectContaining({
          inIndex: { analyzer: 'smartcn', k1: 1.2, b: 0.75 },
          configured: { analyzer: 'smartcn', k1: 1.5, b: 0.75 },
        }),
      }),
    );
  });

  it('elasticsearch - two workers creating the index at once both start', async () => {
    const es = esMock();
    es.on('PUT', '/:index', () => responseError(400, 'resource_already_exists_exception', 'index already exists'));
    // As the other worker created it: this version's mapping.
    es.on('GET', '/:index', () => ({
      [INDEX]: {
        settings: { index: { similarity: { hopline_bm25: { type: 'BM25', k1: '1.5', b: '0.75' } } } },
        mappings: { properties: { body: { type: 'text', analyzer: 'smartcn' }, whole_terms: { type: 'text' } } },
      },
    }));
    const { lines, log } = logRecorder();
    await expect(createElasticsearchLexicalBackend({ client: es.client, log })).resolves.toBeInstanceOf(
      ElasticsearchLexicalBackend,
    );
    expect(lines.filter((line) => line.level === 'warn')).toEqual([]);
  });

  it('elasticsearch - an unreachable cluster fails start-up with UnavailableError', async () => {
    const es = esMock();
    es.on('POST', '/_analyze', () => new errors.ConnectionError('connect ECONNREFUSED 127.0.0.1:9200'));
    await expect(createElasticsearchLexicalBackend({ client: es.client, log: silentLog })).rejects.toBeInstanceOf(
      UnavailableError,
    );
  });
});

describe('elasticsearch lexical backend - search', () => {
  it('elasticsearch - scope is a filter on tenant and kb ids that the query text cannot widen', async () => {
    const es = esMock();
    const backend = await started(es);
    es.on('POST', `/${INDEX}/_search`, () => ({ hits: { hits: [] } }));
    const hostile = 'x" } }, { "match_all": {} } ] } } OR tenant_id:t2 kb_id:*';
    for (const query of ['RFC 7231', hostile]) {
      await backend.search({ scope: { tenantId: 't1', kbIds: ['kb1', 'kb2'] }, query, limit: 50 }, never);
    }
    const bodies = es
      .sent('POST', `/${INDEX}/_search`)
      .map((r) => r.body as { size: number; query: { bool: { filter: unknown; must: unknown } } });
    for (const [i, query] of ['RFC 7231', hostile].entries()) {
      expect(bodies[i]?.size).toBe(50);
      expect(bodies[i]?.query).toEqual({
        bool: {
          filter: [{ term: { tenant_id: 't1' } }, { terms: { kb_id: ['kb1', 'kb2'] } }],
          must: [{ multi_match: { query, fields: ['title^2', 'body'], type: 'most_fields' } }],
        },
      });
    }
  });

  it('elasticsearch - Chinese dates and articles are written and asked as whole terms, which score but never filter', async () => {
    const es = esMock();
    const backend = await started(es);
    es.on('GET', `/${RECORDS}/_doc/*`, recordReply(undefined));
    es.on('POST', '/_bulk', () => ({ errors: false, items: [] }));
    es.on('PUT', `/${RECORDS}/_doc/*`, () => ({ result: 'created' }));
    es.on('POST', `/${INDEX}/_search`, () => ({ hits: { hits: [] } }));
    const dated = chunkOf({
      docId: 'rfc',
      chunkId: 'rfc#0',
      docVersion: 7,
      title: '',
      text: '2023年10月16日，依第 12 条公告',
    });
    await backend.upsertDocument(doc, [dated], never);
    const [, source] = es.sent('POST', '/_bulk')[0]?.body as Array<{ whole_terms?: string }>;
    expect(source?.whole_terms).toBe('第12条 10月16日 2023年10月');
    // A title's year and a body's month make no date together.
    const split = chunkOf({ docId: 'rfc', chunkId: 'rfc#0', docVersion: 8, title: '2023年', text: '10月公告' });
    await backend.upsertDocument({ ...doc, version: 8 }, [split], never);
    const [, splitSource] = es.sent('POST', '/_bulk')[1]?.body as Array<{ whole_terms?: string }>;
    expect(splitSource).not.toHaveProperty('whole_terms');

    const scope = { tenantId: 't1', kbIds: ['kb1'] };
    await backend.search({ scope, query: '10月16日发布了什么公告', limit: 5 }, never);
    await backend.search({ scope, query: 'RFC 7231', limit: 5 }, never);
    const [dateQuery, plainQuery] = es
      .sent('POST', `/${INDEX}/_search`)
      .map((r) => (r.body as { query: { bool: Record<string, unknown> } }).query.bool);
    expect(dateQuery?.should).toEqual([{ match: { whole_terms: '10月16日' } }]);
    // Beside `must`, a should clause only adds to the score: a chunk without the date still matches.
    expect(dateQuery?.must).toBeDefined();
    expect(dateQuery?.minimum_should_match).toBeUndefined();
    expect(plainQuery).not.toHaveProperty('should');
  });

  it('elasticsearch - selected documents add a doc id filter beside the scope', async () => {
    const es = esMock();
    const backend = await started(es);
    es.on('POST', `/${INDEX}/_search`, () => ({ hits: { hits: [] } }));
    await backend.search(
      { scope: { tenantId: 't1', kbIds: ['kb1'], docIds: ['a', 'b'] }, query: 'q', limit: 5 },
      never,
    );
    const [body] = es.sent('POST', `/${INDEX}/_search`).map((r) => r.body as { query: { bool: { filter: unknown } } });
    expect(body?.query.bool.filter).toEqual([
      { term: { tenant_id: 't1' } },
      { terms: { kb_id: ['kb1'] } },
      { terms: { doc_id: ['a', 'b'] } },
    ]);
  });

  it('elasticsearch - hits come back as chunks with their BM25 scores, without the lexical window', async () => {
    const es = esMock();
    const backend = await started(es);
    es.on('POST', `/${INDEX}/_search`, () => ({
      hits: {
        hits: [
          {
            _id: 't1/kb1/rfc%230',
            _score: 3.5,
            _source: {
              chunk_id: 'rfc#0',
              tenant_id: 't1',
              kb_id: 'kb1',
              doc_id: 'rfc',
              doc_version: 7,
              title: 'RFC 7231',
              text: 'HTTP semantics',
              span_start: 0,
              span_end: 14,
              dedupe_key: 'rfc#0',
              effective_date: '2014-06-01',
              source_uri: 'rfc.txt',
            },
          },
        ],
      },
    }));
    const hits = await backend.search({ scope: { tenantId: 't1', kbIds: ['kb1'] }, query: 'http', limit: 5 }, never);
    expect(hits).toEqual([
      {
        score: 3.5,
        chunk: {
          chunkId: 'rfc#0',
          tenantId: 't1',
          kbId: 'kb1',
          docId: 'rfc',
          docVersion: 7,
          title: 'RFC 7231',
          text: 'HTTP semantics',
          span: { start: 0, end: 14 },
          dedupeKey: 'rfc#0',
          effectiveDate: '2014-06-01',
          sourceUri: 'rfc.txt',
        },
      },
    ]);
    expect((es.sent('POST', `/${INDEX}/_search`)[0]?.body as { _source: string[] })._source).not.toContain('body');
  });

  it('elasticsearch - a malformed hit is an internal error, not a chunk', async () => {
    const es = esMock();
    const backend = await started(es);
    es.on('POST', `/${INDEX}/_search`, () => ({
      hits: { hits: [{ _id: 'x', _score: 1, _source: { chunk_id: 'x' } }] },
    }));
    const failure = await backend
      .search({ scope: { tenantId: 't1', kbIds: ['kb1'] }, query: 'x', limit: 5 }, never)
      .catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(HoplineError);
    expect((failure as HoplineError).code).toBe('internal');
  });

  it('elasticsearch - a scope without tenant or kb fails before any request', async () => {
    const es = esMock();
    const backend = await started(es);
    await expect(
      backend.search({ scope: { tenantId: '', kbIds: ['kb1'] }, query: 'x', limit: 5 }, never),
    ).rejects.toBeInstanceOf(ValidationError);
    await expect(
      backend.search({ scope: { tenantId: 't1', kbIds: [] }, query: 'x', limit: 5 }, never),
    ).rejects.toBeInstanceOf(ValidationError);
    expect(es.requests).toEqual([]);
  });
});

describe('elasticsearch lexical backend - versioned writes', () => {
  it('elasticsearch - a first upsert bulk-indexes chunks under scoped ids at the document version (external), then records the version', async () => {
    const es = esMock();
    const backend = await started(es);
    es.on('GET', `/${RECORDS}/_doc/*`, recordReply(undefined));
    es.on('POST', '/_bulk', () => ({ errors: false, items: [] }));
    es.on('PUT', `/${RECORDS}/_doc/*`, () => ({ result: 'created' }));
    expect(await backend.upsertDocument(doc, chunks, never)).toBe('applied');

    const bulk = es.sent('POST', '/_bulk')[0]?.body as unknown[];
    expect(bulk).toEqual([
      { index: { _index: INDEX, _id: 't1/kb1/rfc%230', version: 7, version_type: 'external' } },
      {
        chunk_id: 'rfc#0',
        tenant_id: 't1',
        kb_id: 'kb1',
        doc_id: 'rfc',
        doc_version: 7,
        title: 'RFC 7231',
        body: 'HTTP semantics and content',
        text: 'HTTP semantics',
        span_start: 0,
        span_end: 14,
        dedupe_key: chunks[0]?.dedupeKey,
        effective_date: '',
        source_uri: '',
        // The entity graph's keys, read back by every worker's graph (shared-graph-sync.ts).
        entities: ['rfc 7231', 'http'],
      },
      { index: { _index: INDEX, _id: 't1/kb1/rfc%231', version: 7, version_type: 'external' } },
      expect.objectContaining({
        chunk_id: 'rfc#1',
        body: 'top_p is not here',
        text: 'top_p is not here',
        span_start: 15,
        span_end: 32,
      }),
    ]);
    const record = es.sent('PUT', recordPath)[0];
    expect(record?.querystring).toEqual({ version: '14', version_type: 'external' });
    expect(record?.body).toEqual({
      tenant_id: 't1',
      kb_id: 'kb1',
      doc_id: 'rfc',
      doc_version: 7,
      deleted: false,
      chunks: 2,
      changed_at: expect.any(Number),
    });
    // Nothing older existed: no refresh, no delete_by_query.
    expect(es.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      `GET ${recordPath}`,
      'POST /_bulk',
      `PUT ${recordPath}`,
    ]);
  });

  it('elasticsearch - a newer version removes the older chunks of the document before recording itself, and once more after', async () => {
    const es = esMock();
    const backend = await started(es);
    es.on('GET', `/${RECORDS}/_doc/*`, recordReply({ doc_version: 6, deleted: false, chunks: 5 }));
    es.on('POST', '/_bulk', () => ({ errors: false, items: [] }));
    es.on('PUT', `/${RECORDS}/_doc/*`, () => ({ result: 'updated' }));
    es.on('GET', `/${INDEX}/_refresh`, () => ({ _shards: { total: 1, successful: 1, failed: 0 } }));
    es.on('POST', `/${INDEX}/_delete_by_query`, () => ({ deleted: 3, failures: [] }));
    expect(await backend.upsertDocument(doc, chunks, never)).toBe('applied');
    // Before the record, so a redelivery after a failed cleanup is not 'unchanged'; after it, for
    // the chunks of a write of version 6 that raced this one and recorded itself in between.
    expect(es.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      `GET ${recordPath}`,
      'POST /_bulk',
      `GET /${INDEX}/_refresh`,
      `POST /${INDEX}/_delete_by_query`,
      `PUT ${recordPath}`,
      `GET /${INDEX}/_refresh`,
      `POST /${INDEX}/_delete_by_query`,
    ]);
    const [cleanup, again] = es.sent('POST', `/${INDEX}/_delete_by_query`);
    expect(again?.body).toEqual(cleanup?.body);
    expect(cleanup?.querystring).toEqual({ conflicts: 'proceed', refresh: 'true' });
    expect(cleanup?.body).toEqual({
      query: {
        bool: {
          filter: [
            { term: { tenant_id: 't1' } },
            { term: { kb_id: 'kb1' } },
            { term: { doc_id: 'rfc' } },
            { range: { doc_version: { lt: 7 } } },
          ],
        },
      },
    });
  });

  it('elasticsearch - an upsert of the version recorded writes nothing', async () => {
    const es = esMock();
    const backend = await started(es);
    es.on('GET', `/${RECORDS}/_doc/*`, recordReply({ doc_version: 7, deleted: false, chunks: 2 }));
    expect(await backend.upsertDocument(doc, chunks, never)).toBe('unchanged');
    // Its record was written after all its chunks landed: nothing of it is left to clean up.
    expect(es.requests.map((r) => r.method)).toEqual(['GET']);
  });

  it.each([
    ['a newer version', { doc_version: 8, deleted: false, chunks: 2 }, { lt: 8 }],
    ['a delete at or after its version', { doc_version: 7, deleted: true, chunks: 0 }, { lte: 7 }],
  ] as const)(
    'elasticsearch - an upsert older than %s writes nothing and removes the chunks older than the record',
    async (_case, state, range) => {
      const es = esMock();
      const backend = await started(es);
      es.on('GET', `/${RECORDS}/_doc/*`, recordReply(state));
      es.on('GET', `/${INDEX}/_refresh`, () => ({}));
      es.on('POST', `/${INDEX}/_delete_by_query`, () => ({ deleted: 0, failures: [] }));
      expect(await backend.upsertDocument(doc, chunks, never)).toBe('stale');
      // It may be the redelivery of a write whose chunks landed without their record.
      expect(es.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
        `GET ${recordPath}`,
        `GET /${INDEX}/_refresh`,
        `POST /${INDEX}/_delete_by_query`,
      ]);
      const cleanup = es.sent('POST', `/${INDEX}/_delete_by_query`)[0]?.body as {
        query: { bool: { filter: unknown[] } };
      };
      expect(cleanup.query.bool.filter).toEqual([
        { term: { tenant_id: 't1' } },
        { term: { kb_id: 'kb1' } },
        { term: { doc_id: 'rfc' } },
        { range: { doc_version: range } },
      ]);
    },
  );

  it('elasticsearch - a chunk that is already newer (409) is a no-op, not an error', async () => {
    const es = esMock();
    const backend = await started(es);
    es.on('GET', `/${RECORDS}/_doc/*`, recordReply(undefined));
    es.on('POST', '/_bulk', () => ({
      errors: true,
      items: [
        {
          index: {
            _index: INDEX,
            _id: 't1/kb1/rfc%230',
            status: 409,
            error: { type: 'version_conflict_engine_exception', reason: 'current version [8] is higher' },
          },
        },
        { index: { _index: INDEX, _id: 't1/kb1/rfc%231', status: 201, result: 'created' } },
      ],
    }));
    es.on('PUT', `/${RECORDS}/_doc/*`, () => ({ result: 'created' }));
    expect(await backend.upsertDocument(doc, chunks, never)).toBe('applied');
  });

  it.each([
    [400, 'mapper_parsing_exception', ValidationError],
    [429, 'es_rejected_execution_exception', UnavailableError],
  ] as const)(
    'elasticsearch - a bulk item failing with %i (%s) fails the write before the version is recorded',
    async (status, type, errorClass) => {
      const es = esMock();
      const backend = await started(es);
      es.on('GET', `/${RECORDS}/_doc/*`, recordReply(undefined));
      es.on('POST', '/_bulk', () => ({
        errors: true,
        items: [{ index: { _index: INDEX, _id: 't1/kb1/rfc%230', status, error: { type, reason: 'no' } } }],
      }));
      await expect(backend.upsertDocument(doc, chunks, never)).rejects.toBeInstanceOf(errorClass);
      expect(es.sent('PUT', recordPath)).toEqual([]);
    },
  );

  it('elasticsearch - a write whose record loses to a concurrent newer one removes what it added and reports stale', async () => {
    const es = esMock();
    const backend = await started(es);
    let reads = 0;
    es.on('GET', `/${RECORDS}/_doc/*`, () =>
      recordReply(reads++ === 0 ? undefined : { doc_version: 9, deleted: false, chunks: 1 })(),
    );
    es.on('POST', '/_bulk', () => ({ errors: false, items: [] }));
    es.on('PUT', `/${RECORDS}/_doc/*`, () =>
      responseError(409, 'version_conflict_engine_exception', 'current version [18] is higher'),
    );
    es.on('GET', `/${INDEX}/_refresh`, () => ({}));
    es.on('POST', `/${INDEX}/_delete_by_query`, () => ({ deleted: 2, failures: [] }));
    expect(await backend.upsertDocument(doc, chunks, never)).toBe('stale');
    const cleanup = es.sent('POST', `/${INDEX}/_delete_by_query`)[0]?.body as {
      query: { bool: { filter: unknown[] } };
    };
    expect(cleanup.query.bool.filter).toContainEqual({ range: { doc_version: { lt: 9 } } });
  });

  it('elasticsearch - a delete deletes chunks up to its version, then records a tombstone that outranks that version', async () => {
    const es = esMock();
    const backend = await started(es);
    es.on('GET', `/${RECORDS}/_doc/*`, recordReply({ doc_version: 7, deleted: false, chunks: 2 }));
    es.on('PUT', `/${RECORDS}/_doc/*`, () => ({ result: 'updated' }));
    es.on('GET', `/${INDEX}/_refresh`, () => ({}));
    es.on('POST', `/${INDEX}/_delete_by_query`, () => ({ deleted: 2, failures: [] }));
    expect(await backend.deleteDocument(doc, never)).toBe('applied');
    expect(es.requests.map((r) => `${r.method} ${r.path}`).slice(1, 4)).toEqual([
      `GET /${INDEX}/_refresh`,
      `POST /${INDEX}/_delete_by_query`,
      `PUT ${recordPath}`,
    ]);
    const record = es.sent('PUT', recordPath)[0];
    expect(record?.querystring).toEqual({ version: '15', version_type: 'external' });
    expect(record?.body).toEqual({
      tenant_id: 't1',
      kb_id: 'kb1',
      doc_id: 'rfc',
      doc_version: 7,
      deleted: true,
      chunks: 0,
      changed_at: expect.any(Number),
    });
    const cleanup = es.sent('POST', `/${INDEX}/_delete_by_query`)[0]?.body as {
      query: { bool: { filter: unknown[] } };
    };
    expect(cleanup.query.bool.filter).toEqual([
      { term: { tenant_id: 't1' } },
      { term: { kb_id: 'kb1' } },
      { term: { doc_id: 'rfc' } },
      { range: { doc_version: { lte: 7 } } },
    ]);
  });

  it.each([
    ['a newer version', { doc_version: 8, deleted: false, chunks: 1 }, 'stale'],
    ['a delete at the same version', { doc_version: 7, deleted: true, chunks: 0 }, 'unchanged'],
  ] as const)('elasticsearch - a delete older than %s writes nothing', async (_case, state, outcome) => {
    const es = esMock();
    const backend = await started(es);
    es.on('GET', `/${RECORDS}/_doc/*`, recordReply(state));
    expect(await backend.deleteDocument(doc, never)).toBe(outcome);
    expect(es.requests.map((r) => r.method)).toEqual(['GET']);
  });

  it('elasticsearch - a partial delete_by_query failure fails the write before it is recorded, so it is retried', async () => {
    const es = esMock();
    const backend = await started(es);
    es.on('GET', `/${RECORDS}/_doc/*`, recordReply({ doc_version: 6, deleted: false, chunks: 2 }));
    es.on('PUT', `/${RECORDS}/_doc/*`, () => ({ result: 'updated' }));
    es.on('GET', `/${INDEX}/_refresh`, () => ({}));
    es.on('POST', `/${INDEX}/_delete_by_query`, () => ({
      deleted: 1,
      failures: [
        {
          index: INDEX,
          id: 'x',
          status: 503,
          cause: { type: 'unavailable_shards_exception', reason: 'primary shard is not active' },
        },
      ],
    }));
    await expect(backend.deleteDocument(doc, never)).rejects.toBeInstanceOf(UnavailableError);
    expect(es.sent('PUT', recordPath)).toEqual([]);
  });

  it('elasticsearch - refuses chunks of another document and versions it cannot order', async () => {
    const es = esMock();
    const backend = await started(es);
    await expect(
      backend.upsertDocument(doc, [chunkOf({ docId: 'other', text: 'x', docVersion: 7 })], never),
    ).rejects.toBeInstanceOf(ValidationError);
    await expect(backend.upsertDocument({ ...doc, version: 2 ** 53 }, [], never)).rejects.toBeInstanceOf(
      ValidationError,
    );
    expect(es.requests).toEqual([]);
  });
});

describe('elasticsearch lexical backend - state and counts', () => {
  it('elasticsearch - reads a document record back as its state, and no record as none', async () => {
    const es = esMock();
    const backend = await started(es);
    es.on('GET', `/${RECORDS}/_doc/*`, recordReply({ doc_version: 3, deleted: true, chunks: 0 }));
    expect(await backend.documentState(doc)).toEqual({ version: 3, deleted: true, chunks: 0 });
    es.on('GET', `/${RECORDS}/_doc/*`, recordReply(undefined));
    expect(await backend.documentState(doc)).toBeUndefined();
  });

  it('elasticsearch - a missing records index is an outage retried until a restart creates it, not an empty state', async () => {
    const es = esMock();
    const backend = await started(es);
    es.on('GET', `/${RECORDS}/_doc/*`, () => responseError(404, 'index_not_found_exception', 'no such index'));
    const failure = await backend.documentState(doc).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(UnavailableError);
    expect((failure as Error).message).toContain('restart the worker');
  });

  it('elasticsearch - a chunks index deleted under a running worker (404) fails a write as an outage, retried, not as internal', async () => {
    const es = esMock();
    const backend = await started(es);
    es.on('GET', `/${RECORDS}/_doc/*`, recordReply({ doc_version: 6, deleted: false, chunks: 5 }));
    es.on('POST', '/_bulk', () => ({ errors: false, items: [] }));
    es.on('GET', `/${INDEX}/_refresh`, () =>
      responseError(404, 'index_not_found_exception', `no such index [${INDEX}]`),
    );
    const failure = await backend.upsertDocument(doc, chunks, never).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(UnavailableError);
    expect((failure as UnavailableError).retryable).toBe(true);
    expect(es.sent('PUT', recordPath)).toEqual([]);
  });

  it('elasticsearch - counts chunks per knowledge base through every page of a composite aggregation', async () => {
    const es = esMock();
    const backend = await started(es);
    const pages = [
      {
        buckets: Array.from({ length: 1_000 }, (_, i) => ({ key: { tenant: 't1', kb: `kb${i}` }, doc_count: i + 1 })),
        after_key: { tenant: 't1', kb: 'kb999' },
      },
      { buckets: [{ key: { tenant: 't2', kb: 'kb1' }, doc_count: 4, documents: { value: 2 } }] },
    ];
    let page = 0;
    es.on('POST', `/${INDEX}/_search`, () => ({ hits: { hits: [] }, aggregations: { kbs: pages[page++] } }));
    const counts = await backend.countChunks(never);
    expect(counts).toHaveLength(1_001);
    expect(counts.at(-1)).toEqual({ tenantId: 't2', kbId: 'kb1', documents: 2, chunks: 4 });
    const bodies = es
      .sent('POST', `/${INDEX}/_search`)
      .map((r) => r.body as { size: number; aggs: { kbs: { composite: { after?: unknown; sources: unknown } } } });
    expect(bodies[0]?.size).toBe(0);
    expect(bodies[0]?.aggs.kbs.composite.sources).toEqual([
      { tenant: { terms: { field: 'tenant_id' } } },
      { kb: { terms: { field: 'kb_id' } } },
    ]);
    expect(bodies[0]?.aggs.kbs).toMatchObject({
      aggs: { documents: { cardinality: { field: 'doc_id' } } },
    });
    expect(bodies[0]?.aggs.kbs.composite.after).toBeUndefined();
    expect(bodies[1]?.aggs.kbs.composite.after).toEqual({ tenant: 't1', kb: 'kb999' });
  });
});

describe('elasticsearch lexical backend - failures', () => {
  const search = (backend: ElasticsearchLexicalBackend, signal = never): Promise<unknown> =>
    backend.search({ scope: { tenantId: 't1', kbIds: ['kb1'] }, query: 'x', limit: 5 }, signal);

  it.each([
    [
      'a connection error becomes UnavailableError, counted by the breaker',
      () => new errors.ConnectionError('connect ECONNREFUSED'),
      UnavailableError,
      true,
    ],
    [
      'a 503 becomes UnavailableError, counted by the breaker',
      () => responseError(503, 'search_phase_execution_exception', 'all shards failed'),
      UnavailableError,
      true,
    ],
    [
      'a 500 (a node lost mid-request) becomes UnavailableError, counted by the breaker and retried',
      () => responseError(500, 'node_disconnected_exception', 'node left the cluster during the request'),
      UnavailableError,
      true,
    ],
    [
      'a 429 becomes UnavailableError, counted by the breaker',
      () => responseError(429, 'es_rejected_execution_exception', 'queue full'),
      UnavailableError,
      true,
    ],
    [
      'a 400 becomes ValidationError, not counted by the breaker',
      () => responseError(400, 'parsing_exception', 'bad query'),
      ValidationError,
      false,
    ],
  ] as const)('elasticsearch - %s', async (_case, reply, errorClass, infrastructure) => {
    const es = esMock();
    const backend = await started(es);
    es.on('POST', `/${INDEX}/_search`, reply);
    const failure = await search(backend).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(errorClass);
    expect(isInfrastructureError(failure)).toBe(infrastructure);
  });

  it('elasticsearch - a signal already aborted sends nothing and fails with its reason', async () => {
    const es = esMock();
    const backend = await started(es);
    const controller = new AbortController();
    controller.abort(new DeadlineExceededError('hop budget spent'));
    await expect(search(backend, controller.signal)).rejects.toThrow('hop budget spent');
    const plain = new AbortController();
    plain.abort();
    await expect(search(backend, plain.signal)).rejects.toBeInstanceOf(CancelledError);
    expect(es.requests).toEqual([]);
  });

  describe('on a real socket', () => {
    let server: Server | undefined;
    afterEach(async () => {
      if (!server) return;
      server.closeAllConnections();
      await new Promise((resolve) => server?.close(resolve));
      server = undefined;
    });

    /** An HTTP server that accepts requests and never answers them. */
    async function silentServer(): Promise<{ url: string; requests: IncomingMessage[] }> {
      const requests: IncomingMessage[] = [];
      server = createServer((request) => void requests.push(request));
      await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
      return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
    }

    const backendOn = (client: Client): ElasticsearchLexicalBackend =>
      new ElasticsearchLexicalBackend(client, INDEX, RECORDS, 'standard', 2, true);

    it('elasticsearch - aborting the signal aborts the HTTP request in flight', async () => {
      const { url, requests } = await silentServer();
      const backend = backendOn(new Client({ node: url, maxRetries: 0 }));
      const controller = new AbortController();
      const pending = search(backend, controller.signal).catch((e: unknown) => e);
      await expect.poll(() => requests.length).toBe(1);
      const closed = new Promise((resolve) => requests[0]?.socket.once('close', resolve));
      controller.abort(new DeadlineExceededError('retrieval deadline'));
      expect(await pending).toBeInstanceOf(DeadlineExceededError);
      await closed;
      await backend.close();
    });

    it('elasticsearch - a request timeout becomes DeadlineExceededError', async () => {
      const { url } = await silentServer();
      const backend = backendOn(new Client({ node: url, maxRetries: 0, requestTimeout: 50 }));
      await expect(search(backend)).rejects.toBeInstanceOf(DeadlineExceededError);
      await backend.close();
    });

    it('elasticsearch - a refused connection becomes UnavailableError', async () => {
      const { url } = await silentServer();
      await new Promise((resolve) => server?.close(resolve));
      server = undefined;
      const backend = backendOn(new Client({ node: url, maxRetries: 0 }));
      await expect(search(backend)).rejects.toBeInstanceOf(UnavailableError);
      await backend.close();
    });
  });

  it('elasticsearch - when the cluster is down the hybrid retriever answers from vectors alone and says why', async () => {
    const es = esMock();
    const backend = await started(es);
    es.on('POST', `/${INDEX}/_search`, () => new errors.ConnectionError('connect ECONNREFUSED'));
    const embedder = new HashingEmbedder({ dimensions: 64 });
    const vector = await EmbeddedVectorBackend.open({ dimensions: 64 });
    const [embedded] = await embedder.embed(['lighthouse keeper'], never);
    await vector.upsertDocument({ tenantId: 't1', kbId: 'kb1', docId: 'lh', version: 1 }, [
      { chunk: chunkOf({ docId: 'lh', text: 'lighthouse keeper' }), vector: embedded as Float32Array },
    ]);
    const guard = createDeadlineGuard();
    const retriever = createHybridRetriever({
      lexical: backend,
      vector,
      embedder,
      lexicalGuard: guard,
      vectorGuard: guard,
    });
    const result = await retriever.retrieve({
      query: 'lighthouse keeper',
      scope: { tenantId: 't1', kbIds: ['kb1'] },
      hop: 1,
      deadlineUnixMs: Date.now() + 2_000,
    });
    expect(result.degraded).toBe(true);
    expect(result.degradedReasons).toEqual([expect.stringMatching(/^elasticsearch search failed \(unavailable\)/)]);
    expect(result.chunks.map((c) => [c.docId, c.foundBy])).toEqual([['lh', 'VECTOR']]);
  });
});

describe('elasticsearch lexical backend - batch writes', () => {
  const docs = Array.from({ length: 20 }, (_, i) => ({ tenantId: 't1', kbId: 'kb1', docId: `d${i}`, version: 3 }));
  const upserts = docs.map((key) => ({
    op: 'upsert' as const,
    doc: key,
    items: [0, 1].map((n) => chunkOf({ docId: key.docId, chunkId: `${key.docId}#${n}`, docVersion: 3, text: 'x' })),
  }));

  /** Answers `_mget` from `records` and each bulk action with `answer` (default: created). */
  function cluster(
    es: ReturnType<typeof esMock>,
    records: Record<string, { doc_version: number; deleted: boolean; chunks: number }> = {},
    answer: (id: string, index: string) => Record<string, unknown> = () => ({ status: 201, result: 'created' }),
  ): void {
    es.on('POST', `/${RECORDS}/_mget`, (request) => ({
      docs: (request.body as { ids: string[] }).ids.map((id) => {
        const state = records[id];
        return state
          ? { _index: RECORDS, _id: id, found: true, _source: { tenant_id: 't1', kb_id: 'kb1', doc_id: id, ...state } }
          : { _index: RECORDS, _id: id, found: false };
      }),
    }));
    es.on('POST', '/_bulk', (request) => {
      const actions = (request.body as Array<{ index?: { _index: string; _id: string } }>).filter((line) => line.index);
      const items = actions.map(({ index }) => ({
        index: { _index: index?._index, _id: index?._id, ...answer(index?._id ?? '', index?._index ?? '') },
      }));
      return { errors: items.some((item) => 'error' in item.index), items };
    });
    es.on('GET', `/${INDEX}/_refresh`, () => ({}));
    es.on('POST', `/${INDEX}/_delete_by_query`, () => ({ deleted: 0, failures: [] }));
  }

  it('elasticsearch - twenty documents in one batch are one record read, one chunk bulk and one record bulk', async () => {
    const es = esMock();
    const backend = await started(es);
    cluster(es);
    expect(await backend.writeDocuments(upserts, never)).toEqual(docs.map(() => 'applied'));
    expect(es.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      `POST /${RECORDS}/_mget`,
      'POST /_bulk',
      'POST /_bulk',
    ]);
    const [chunkBulk, recordBulk] = es.sent('POST', '/_bulk').map((r) => r.body as unknown[]);
    expect(chunkBulk).toHaveLength(20 * 2 * 2);
    expect(recordBulk).toHaveLength(20 * 2);
    expect(recordBulk?.[0]).toEqual({
      index: { _index: RECORDS, _id: 't1/kb1/d0', version: 6, version_type: 'external' },
    });
  });

  it('elasticsearch - a bulk item error fails its own document only; the others are applied and recorded', async () => {
    const es = esMock();
    const backend = await started(es);
    cluster(es, {}, (id) =>
      id === 't1/kb1/d4%231'
        ? { status: 400, error: { type: 'mapper_parsing_exception', reason: 'bad body' } }
        : { status: 201, result: 'created' },
    );
    const results = await backend.writeDocuments(upserts, never);
    expect(results[4]).toBeInstanceOf(ValidationError);
    expect(String(results[4])).toMatch(/chunk t1\/kb1\/d4%231 of d4: mapper_parsing_exception/);
    expect(results.filter((result) => result === 'applied')).toHaveLength(19);
    // No record stands for the chunks that failed, so a redelivery writes the document again.
    const recordBulk = es.sent('POST', '/_bulk')[1]?.body as Array<{ index?: { _id: string } }>;
    expect(recordBulk.filter((line) => line.index).map((line) => line.index?._id)).not.toContain('t1/kb1/d4');
    expect(recordBulk.filter((line) => line.index)).toHaveLength(19);
  });

  it('elasticsearch - records that lose to newer ones are stale and take back their chunks; replaced versions are cleaned in one query before the records and one after', async () => {
    const winners: Record<string, { doc_version: number; deleted: boolean; chunks: number }> = {
      't1/kb1/d1': { doc_version: 2, deleted: false, chunks: 1 },
      't1/kb1/d2': { doc_version: 9, deleted: false, chunks: 1 },
    };
    const es2 = esMock();
    const racing = await started(es2);
    cluster(es2, winners, (id, index) =>
      index === RECORDS && id === 't1/kb1/d2'
        ? { status: 409, error: { type: 'version_conflict_engine_exception', reason: 'newer' } }
        : index === RECORDS && id === 't1/kb1/d1'
          ? { status: 200, result: 'updated' }
          : { status: 201, result: 'created' },
    );
    // d2's first read sees nothing; the read after the conflict sees version 9.
    let reads = 0;
    es2.on('POST', `/${RECORDS}/_mget`, (request) => {
      reads += 1;
      const ids = (request.body as { ids: string[] }).ids;
      return {
        docs: ids.map((id) => {
          const state = reads > 1 ? winners[id] : id === 't1/kb1/d1' ? winners[id] : undefined;
          return state
            ? {
                _index: RECORDS,
                _id: id,
                found: true,
                _source: { tenant_id: 't1', kb_id: 'kb1', doc_id: id, ...state },
              }
            : { _index: RECORDS, _id: id, found: false };
        }),
      };
    });
    expect(await racing.writeDocuments(upserts.slice(0, 3), never)).toEqual(['applied', 'applied', 'stale']);
    expect(es2.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      `POST /${RECORDS}/_mget`,
      'POST /_bulk',
      `GET /${INDEX}/_refresh`,
      `POST /${INDEX}/_delete_by_query`,
      'POST /_bulk',
      `POST /${RECORDS}/_mget`,
      `GET /${INDEX}/_refresh`,
      `POST /${INDEX}/_delete_by_query`,
    ]);
    const [beforeRecords, cleanup] = es2
      .sent('POST', `/${INDEX}/_delete_by_query`)
      .map((r) => r.body as { query: { bool: { should: Array<{ bool: { filter: unknown[] } }> } } });
    // Only d1 had a record to replace before this batch.
    expect(beforeRecords?.query.bool.should.map(({ bool }) => bool.filter[2])).toEqual([{ term: { doc_id: 'd1' } }]);
    expect(cleanup?.query.bool.should.map(({ bool }) => bool.filter[2])).toEqual([
      { term: { doc_id: 'd1' } },
      { term: { doc_id: 'd2' } },
    ]);
    expect(cleanup?.query.bool.should.map(({ bool }) => bool.filter[3])).toEqual([
      { range: { doc_version: { lt: 3 } } },
      { range: { doc_version: { lt: 9 } } },
    ]);
  });

  it('elasticsearch - a stale upsert shares the delete_by_query of the replaced versions, with the state it lost to', async () => {
    const es = esMock();
    const backend = await started(es);
    cluster(es, {
      't1/kb1/d0': { doc_version: 2, deleted: false, chunks: 2 },
      't1/kb1/d1': { doc_version: 5, deleted: false, chunks: 2 },
      't1/kb1/d2': { doc_version: 3, deleted: false, chunks: 2 },
    });
    expect(await backend.writeDocuments(upserts.slice(0, 3), never)).toEqual(['applied', 'stale', 'unchanged']);
    expect(es.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      `POST /${RECORDS}/_mget`,
      'POST /_bulk',
      `GET /${INDEX}/_refresh`,
      `POST /${INDEX}/_delete_by_query`,
      'POST /_bulk',
    ]);
    const cleanup = es.sent('POST', `/${INDEX}/_delete_by_query`)[0]?.body as {
      query: { bool: { should: Array<{ bool: { filter: unknown[] } }> } };
    };
    // d1's version 3 may have landed chunks without its record before version 5 was recorded.
    expect(cleanup.query.bool.should.map(({ bool }) => bool.filter.slice(2))).toEqual([
      [{ term: { doc_id: 'd0' } }, { range: { doc_version: { lt: 3 } } }],
      [{ term: { doc_id: 'd1' } }, { range: { doc_version: { lt: 5 } } }],
    ]);
    // Only d0's chunks and record are written.
    const [chunkBulk, recordBulk] = es.sent('POST', '/_bulk').map((r) => r.body as unknown[]);
    expect(chunkBulk).toHaveLength(2 * 2);
    expect(recordBulk).toHaveLength(2);
  });

  it('elasticsearch - a batch larger than the bulk limits is split, and a document written twice is decided against its first write', async () => {
    const es = esMock();
    const backend = await createElasticsearchLexicalBackend({
      client: es.client,
      log: silentLog,
      bulkMaxOperations: 15,
    });
    es.requests.length = 0;
    cluster(es);
    const again = { op: 'delete' as const, doc: { tenantId: 't1', kbId: 'kb1', docId: 'd0', version: 3 } };
    const results = await backend.writeDocuments([...upserts, again], never);
    expect(results).toEqual([...docs.map(() => 'applied'), 'applied']);
    const bulks = es.sent('POST', '/_bulk').map((r) => (r.body as unknown[]).length / 2);
    // Round 1: 40 chunks in 15 + 15 + 10, 20 records in 15 + 5; round 2: the delete's record.
    expect(bulks).toEqual([15, 15, 10, 15, 5, 1]);
    expect(es.sent('POST', `/${RECORDS}/_mget`)).toHaveLength(2);
  });
});

describe('elasticsearch lexical backend - a cleanup that fails', () => {
  type ChunkFilter = { term?: Record<string, string>; range?: { doc_version: { lt?: number; lte?: number } } };
  interface Kept {
    version: number;
    source: Record<string, unknown>;
  }

  /**
   * A cluster that keeps what it is sent, so a redelivery meets what the first attempt left:
   * external versions decide every write, a delete_by_query runs its filters over the chunks, the
   * first `failingCleanups` delete_by_queries fail on a shard, the first `failingRecords` record
   * writes fail likewise (after their chunks landed), and `afterFirstCleanup` runs once the first
   * delete_by_query that succeeds is done (another writer's turn).
   */
  function keepingCluster(
    es: ReturnType<typeof esMock>,
    { failingCleanups = 0, failingRecords = 0, afterFirstCleanup = () => {} } = {},
  ): { chunks(): string[]; write(index: string, id: string, version: number, source: object): void } {
    const chunkStore = new Map<string, Kept>();
    const recordStore = new Map<string, Kept>();
    const keep = (
      store: Map<string, Kept>,
      id: string,
      version: number,
      source: unknown,
    ): 'created' | 'updated' | undefined => {
      const current = store.get(id);
      if (current && current.version >= version) return undefined;
      store.set(id, { version, source: source as Record<string, unknown> });
      return current ? 'updated' : 'created';
    };
    const recordOf = (id: string) => {
      const record = recordStore.get(id);
      return record
        ? { _index: RECORDS, _id: id, found: true, _version: record.version, _source: record.source }
        : { _index: RECORDS, _id: id, found: false };
    };
    const recordId = (request: RecordedRequest): string => request.path.slice(`/${RECORDS}/_doc/`.length);
    const conflict = { type: 'version_conflict_engine_exception', reason: 'current version is higher' };
    const unavailable = { type: 'unavailable_shards_exception', reason: 'primary shard is not active' };
    let recordWrites = 0;
    const recordFails = (): boolean => ++recordWrites <= failingRecords;
    es.on('GET', `/${RECORDS}/_doc/*`, (request) => recordOf(recordId(request)));
    es.on('POST', `/${RECORDS}/_mget`, (request) => ({ docs: (request.body as { ids: string[] }).ids.map(recordOf) }));
    es.on('PUT', `/${RECORDS}/_doc/*`, (request) => {
      if (recordFails()) return responseError(503, unavailable.type, unavailable.reason);
      const result = keep(recordStore, recordId(request), Number(request.querystring.version), request.body);
      return result ? { result } : responseError(409, conflict.type, conflict.reason);
    });
    es.on('POST', '/_bulk', (request) => {
      const lines = request.body as unknown[];
      const items = [];
      for (let at = 0; at < lines.length; at += 2) {
        const { _index, _id, version } = (lines[at] as { index: { _index: string; _id: string; version: number } })
          .index;
        if (_index === RECORDS && recordFails()) {
          items.push({ index: { _index, _id, status: 503, error: unavailable } });
          continue;
        }
        const result = keep(_index === RECORDS ? recordStore : chunkStore, _id, version, lines[at + 1]);
        items.push({
          index: { _index, _id, ...(result ? { status: 200, result } : { status: 409, error: conflict }) },
        });
      }
      return { errors: items.some(({ index }) => 'error' in index), items };
    });
    es.on('GET', `/${INDEX}/_refresh`, () => ({}));
    let cleanups = 0;
    es.on('POST', `/${INDEX}/_delete_by_query`, (request) => {
      cleanups += 1;
      if (cleanups <= failingCleanups)
        return {
          deleted: 0,
          failures: [
            {
              index: INDEX,
              id: 'x',
              status: 503,
              cause: unavailable,
            },
          ],
        };
      const { bool } = (
        request.body as {
          query: { bool: { filter?: ChunkFilter[]; should?: Array<{ bool: { filter: ChunkFilter[] } }> } };
        }
      ).query;
      const alternatives = bool.filter ? [bool.filter] : (bool.should ?? []).map((clause) => clause.bool.filter);
      const matches = (filter: ChunkFilter, source: Record<string, unknown>): boolean => {
        if (filter.term) return Object.entries(filter.term).every(([field, value]) => source[field] === value);
        const version = source.doc_version as number;
        const { lt = Infinity, lte = Infinity } = filter.range?.doc_version ?? {};
        return version < lt && version <= lte;
      };
      let deleted = 0;
      for (const [id, { source }] of chunkStore)
        if (alternatives.some((filters) => filters.every((filter) => matches(filter, source)))) {
          chunkStore.delete(id);
          deleted += 1;
        }
      if (cleanups === failingCleanups + 1) afterFirstCleanup();
      return { deleted, failures: [] };
    });
    return {
      write: (index, id, version, source) =>
        void keep(index === RECORDS ? recordStore : chunkStore, id, version, source),
      chunks: () =>
        [...chunkStore.values()].map(({ source }) => `${String(source.chunk_id)}@${String(source.doc_version)}`),
    };
  }

  const chunksAt = (version: number, count: number) =>
    Array.from({ length: count }, (_, n) =>
      chunkOf({ docId: 'rfc', chunkId: `rfc#${n}`, docVersion: version, text: 'x' }),
    );
  const firstVersion: DocumentWrite<IndexedChunk> = {
    op: 'upsert',
    doc: { ...doc, version: 6 },
    items: chunksAt(6, 3),
  };
  const writePaths = {
    'one document at a time': (backend: ElasticsearchLexicalBackend, write: DocumentWrite<IndexedChunk>) =>
      write.op === 'upsert'
        ? backend.upsertDocument(write.doc, write.items, never)
        : backend.deleteDocument(write.doc, never),
    'in a batch': async (backend: ElasticsearchLexicalBackend, write: DocumentWrite<IndexedChunk>) => {
      const [result] = await backend.writeDocuments([write], never);
      if (result instanceof Error) throw result;
      return result;
    },
    // As a retrieval worker writes: the indexer decides each side from its record before it
    // writes anything, and an upsert a side holds newer still reaches that side.
    'behind the indexer': async (backend: ElasticsearchLexicalBackend, write: DocumentWrite<IndexedChunk>) => {
      let indexer = indexers.get(backend);
      if (indexer === undefined) {
        indexer = createIndexer({
          lexical: backend,
          vector: await EmbeddedVectorBackend.open({ dimensions: 8 }),
          embedder: new HashingEmbedder({ dimensions: 8 }),
          // The document's text says how many chunks its version has.
          chunk: (document) => chunksAt(document.version, Number(document.text)),
        });
        indexers.set(backend, indexer);
      }
      const { tenantId, kbId, docId, version } = write.doc;
      const result = await indexer.apply(
        write.op === 'upsert'
          ? {
              op: 'upsert',
              upsert: {
                tenantId,
                kbId,
                docId,
                version,
                title: '',
                text: String(write.items.length),
                effectiveDate: '',
                sourceUri: '',
                metadata: {},
              },
            }
          : { op: 'delete', delete: { tenantId, kbId, docId, version } },
        never,
      );
      return result.lexical;
    },
  };
  const indexers = new WeakMap<ElasticsearchLexicalBackend, Indexer>();

  describe.each(Object.keys(writePaths) as Array<keyof typeof writePaths>)('%s', (path) => {
    const write = writePaths[path];
    it.each([
      ['a newer version with fewer chunks', { op: 'upsert', doc, items: chunksAt(7, 2) }, ['rfc#0@7', 'rfc#1@7']],
      ['a delete', { op: 'delete', doc }, []],
    ] as const)(
      'elasticsearch - %s whose delete_by_query fails is cleaned up by its redelivery',
      async (_case, replacing, left) => {
        const es = esMock();
        const backend = await started(es);
        const cluster = keepingCluster(es, { failingCleanups: 1 });
        expect(await write(backend, firstVersion)).toBe('applied');
        await expect(write(backend, replacing)).rejects.toBeInstanceOf(UnavailableError);
        // Decided from the record, as the indexer decides a redelivery before writing anything.
        expect(await write(backend, replacing)).toBe('applied');
        expect(cluster.chunks().sort()).toEqual(left);
      },
    );

    it('elasticsearch - chunks of an older version that raced in after the cleanup go once the record is written', async () => {
      const es = esMock();
      const backend = await started(es);
      const scoped = { tenant_id: 't1', kb_id: 'kb1', doc_id: 'rfc' };
      // Another worker's version 6 lands between this write's cleanup and its record: its chunks 1
      // and 2 (its chunk 0 lost to version 7's), and its record, over version 5's.
      const cluster = keepingCluster(es, {
        afterFirstCleanup: () => {
          for (const n of [1, 2])
            cluster.write(INDEX, `t1/kb1/rfc%23${n}`, 6, { ...scoped, chunk_id: `rfc#${n}`, doc_version: 6 });
          cluster.write(RECORDS, 't1/kb1/rfc', 12, { ...scoped, doc_version: 6, deleted: false, chunks: 3 });
        },
      });
      expect(await write(backend, { op: 'upsert', doc: { ...doc, version: 5 }, items: chunksAt(5, 1) })).toBe(
        'applied',
      );
      expect(await write(backend, { op: 'upsert', doc, items: chunksAt(7, 1) })).toBe('applied');
      expect(cluster.chunks()).toEqual(['rfc#0@7']);
    });

    it("elasticsearch - chunks whose record was never written go with their redelivery, stale after a newer version recorded as a first one; the newer version's stay", async () => {
      const es = esMock();
      const backend = await started(es);
      const cluster = keepingCluster(es, { failingRecords: 1 });
      // Version 6 lands its three chunks but not its record: its message will be redelivered.
      await expect(write(backend, firstVersion)).rejects.toBeInstanceOf(UnavailableError);
      expect(cluster.chunks().sort()).toEqual(['rfc#0@6', 'rfc#1@6', 'rfc#2@6']);
      // Version 7 finds no record, so it is a first version and replaces nothing: chunk 2 of 6 stays.
      expect(await write(backend, { op: 'upsert', doc, items: chunksAt(7, 2) })).toBe('applied');
      expect(cluster.chunks().sort()).toEqual(['rfc#0@7', 'rfc#1@7', 'rfc#2@6']);
      // The redelivery of version 6 is stale, and takes that chunk with it.
      expect(await write(backend, firstVersion)).toBe('stale');
      expect(cluster.chunks().sort()).toEqual(['rfc#0@7', 'rfc#1@7']);
      expect(await write(backend, { op: 'upsert', doc, items: chunksAt(7, 2) })).toBe('unchanged');
    });

    it('elasticsearch - a stale upsert whose cleanup fails is an error, so its redelivery cleans up', async () => {
      const es = esMock();
      const backend = await started(es);
      const cluster = keepingCluster(es, { failingRecords: 1, failingCleanups: 1 });
      await expect(write(backend, firstVersion)).rejects.toBeInstanceOf(UnavailableError);
      expect(await write(backend, { op: 'upsert', doc, items: chunksAt(7, 2) })).toBe('applied');
      await expect(write(backend, firstVersion)).rejects.toBeInstanceOf(UnavailableError);
      expect(cluster.chunks().sort()).toEqual(['rfc#0@7', 'rfc#1@7', 'rfc#2@6']);
      expect(await write(backend, firstVersion)).toBe('stale');
      expect(cluster.chunks().sort()).toEqual(['rfc#0@7', 'rfc#1@7']);
    });

    it("elasticsearch - a stale upsert after a delete removes chunks up to the delete's version, never a newer writer's", async () => {
      const es = esMock();
      const backend = await started(es);
      const cluster = keepingCluster(es);
      const scoped = { tenant_id: 't1', kb_id: 'kb1', doc_id: 'rfc' };
      expect(await write(backend, { op: 'delete', doc })).toBe('applied');
      // After the delete's cleanup: chunk 2 of a version 6 whose writer died before its record,
      // and chunk 0 of a version 8 whose writer has yet to record it.
      cluster.write(INDEX, 't1/kb1/rfc%232', 6, { ...scoped, chunk_id: 'rfc#2', doc_version: 6 });
      cluster.write(INDEX, 't1/kb1/rfc%230', 8, { ...scoped, chunk_id: 'rfc#0', doc_version: 8 });
      expect(await write(backend, firstVersion)).toBe('stale');
      expect(cluster.chunks()).toEqual(['rfc#0@8']);
    });
  });
});

describe('elasticsearch lexical backend - what the entity graph reads back', () => {
  type SearchBody = {
    size: number;
    query: unknown;
    sort: unknown;
    search_after?: unknown[];
    _source?: string[];
  };
  const record = (docId: string, state: { doc_version: number; deleted: boolean; chunks: number }) => ({
    _id: `t1/kb1/${docId}`,
    _source: { tenant_id: 't1', kb_id: 'kb1', doc_id: docId, changed_at: 1_700_000_000_000, ...state },
    sort: ['t1', 'kb1', docId],
  });

  it('elasticsearch - document changes are the records written since a time, every page of them by search_after', async () => {
    const es = esMock();
    const backend = await started(es);
    const all = Array.from({ length: 1_001 }, (_, i) =>
      record(`d${String(i).padStart(4, '0')}`, { doc_version: 2, deleted: i === 0, chunks: i === 0 ? 0 : 3 }),
    );
    es.on('POST', `/${RECORDS}/_search`, (request) => {
      const after = (request.body as SearchBody).search_after;
      return { hits: { hits: after ? all.slice(1_000) : all.slice(0, 1_000) } };
    });
    const pages: unknown[][] = [];
    for await (const page of backend.documentChanges(1_700_000_000_000, never)) pages.push(page);
    expect(pages.map((page) => page.length)).toEqual([1_000, 1]);
    expect(pages[0]?.[0]).toEqual({ doc: { ...doc, docId: 'd0000', version: 2 }, deleted: true, chunks: 0 });
    expect(pages[1]?.[0]).toEqual({ doc: { ...doc, docId: 'd1000', version: 2 }, deleted: false, chunks: 3 });
    const [first, second] = es.sent('POST', `/${RECORDS}/_search`).map((r) => r.body as SearchBody);
    expect(first).toMatchObject({
      size: 1_000,
      query: { range: { changed_at: { gte: 1_700_000_000_000 } } },
      sort: [{ tenant_id: 'asc' }, { kb_id: 'asc' }, { doc_id: 'asc' }],
    });
    expect(first?.search_after).toBeUndefined();
    expect(second?.search_after).toEqual(['t1', 'kb1', 'd0999']);

    // No time: every record, those written before records carried one included.
    for await (const _page of backend.documentChanges(undefined, never)) break;
    expect((es.sent('POST', `/${RECORDS}/_search`).at(-1)?.body as SearchBody).query).toEqual({ match_all: {} });
  });

  it('elasticsearch - the chunks of document versions come back with their entity keys, every document filtered in one query', async () => {
    const es = esMock();
    const backend = await started(es);
    const stored = (chunk: (typeof chunks)[number]) => ({
      _id: `t1/kb1/${chunk.chunkId}`,
      _source: {
        chunk_id: chunk.chunkId,
        tenant_id: 't1',
        kb_id: 'kb1',
        doc_id: chunk.docId,
        doc_version: chunk.docVersion,
        title: chunk.title,
        text: chunk.text,
        span_start: chunk.span.start,
        span_end: chunk.span.end,
        dedupe_key: chunk.dedupeKey,
        effective_date: '',
        source_uri: '',
        ...(chunk.entities ? { entities: chunk.entities } : {}),
      },
      sort: ['t1', 'kb1', chunk.chunkId],
    });
    es.on('POST', `/${INDEX}/_search`, () => ({ hits: { hits: chunks.map(stored) } }));
    const read = await backend.readChunks([doc, { ...doc, docId: 'other', version: 2 }], never);
    // Entity keys as written; a chunk written before the graph has none (extracted at load).
    expect(read.map((chunk) => [chunk.chunkId, chunk.entities])).toEqual([
      ['rfc#0', ['rfc 7231', 'http']],
      ['rfc#1', undefined],
    ]);
    expect(read[0]).toMatchObject({ docId: 'rfc', docVersion: 7, text: 'HTTP semantics', title: 'RFC 7231' });
    const [body] = es.sent('POST', `/${INDEX}/_search`).map((r) => r.body as SearchBody);
    expect(body?.query).toEqual({
      bool: {
        should: [
          [doc.docId, 7],
          ['other', 2],
        ].map(([docId, version]) => ({
          bool: {
            filter: [
              { term: { tenant_id: 't1' } },
              { term: { kb_id: 'kb1' } },
              { term: { doc_id: docId } },
              { term: { doc_version: version } },
            ],
          },
        })),
        minimum_should_match: 1,
      },
    });
    expect(body?._source).toContain('entities');
    expect(body?.sort).toEqual([{ tenant_id: 'asc' }, { kb_id: 'asc' }, { chunk_id: 'asc' }]);
  });

  it('elasticsearch - chunks of more than 500 documents are read in one query per 500, under the boolean clause limit', async () => {
    const es = esMock();
    const backend = await started(es);
    es.on('POST', `/${INDEX}/_search`, () => ({ hits: { hits: [] } }));
    const many = Array.from({ length: 1_200 }, (_, i) => ({ ...doc, docId: `d${i}` }));
    expect(await backend.readChunks(many, never)).toEqual([]);
    const shoulds = es
      .sent('POST', `/${INDEX}/_search`)
      .map((r) => (r.body as { query: { bool: { should: unknown[] } } }).query.bool.should.length);
    expect(shoulds).toEqual([500, 500, 200]);
  });
});
