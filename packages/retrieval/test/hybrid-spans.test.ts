import { UnavailableError } from '@hopline/contracts';
import { startTestTelemetry, type TestTelemetry } from '@hopline/telemetry/testing';
import { SpanStatusCode } from '@opentelemetry/api';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  EmbeddedLexicalBackend,
  EmbeddedVectorBackend,
  HashingEmbedder,
  createDeadlineGuard,
  createHybridRetriever,
  createIndexer,
  type Guard,
  type LexicalBackend,
} from '../src/index.js';

let telemetry: TestTelemetry;
beforeAll(() => {
  telemetry = startTestTelemetry('retrieval-worker');
});
afterAll(() => telemetry.shutdown());
beforeEach(() => telemetry.exporter.reset());

const scope = { tenantId: 't1', kbIds: ['kb1'] };

async function retrieverOver(lexicalOf: (lexical: EmbeddedLexicalBackend) => LexicalBackend, lexicalGuard: Guard) {
  const embedder = new HashingEmbedder({ dimensions: 64 });
  const lexical = await EmbeddedLexicalBackend.open();
  const vector = await EmbeddedVectorBackend.open({ dimensions: 64 });
  await createIndexer({ lexical, vector, embedder }).apply({
    op: 'upsert',
    upsert: {
      tenantId: 't1',
      kbId: 'kb1',
      docId: 'lighthouse',
      version: 1,
      title: 'Lighthouse',
      text: 'The lighthouse keeper lit the lamp every evening.',
      effectiveDate: '',
      sourceUri: '',
      metadata: {},
    },
  });
  return createHybridRetriever({
    lexical: lexicalOf(lexical),
    vector,
    embedder,
    lexicalGuard,
    vectorGuard: createDeadlineGuard(),
  });
}

const retrieve = (retriever: Awaited<ReturnType<typeof retrieverOver>>) =>
  retriever.retrieve({ query: 'lighthouse keeper', scope, hop: 2, deadlineUnixMs: Date.now() + 2_000 });

describe('hybrid retrieval spans', () => {
  it('spans - each path and the fusion get a span with the scope, the hop and the path hits; the result reports each path', async () => {
    const result = await retrieve(await retrieverOver((lexical) => lexical, createDeadlineGuard()));
    const [bm25] = telemetry.spansNamed('bm25 search');
    const [vector] = telemetry.spansNamed('vector search');
    const [fusion] = telemetry.spansNamed('fusion');
    expect(bm25?.attributes).toMatchObject({
      'hopline.retrieval.path': 'bm25',
      'hopline.tenant_id': 't1',
      'hopline.kb_ids': ['kb1'],
      'hopline.hop': 2,
      'hopline.retrieval.hits': 1,
    });
    // The embedded indexes are no database OpenTelemetry names.
    expect(bm25?.attributes['db.system']).toBeUndefined();
    expect(vector?.attributes).toMatchObject({ 'hopline.retrieval.path': 'vector', 'hopline.retrieval.hits': 1 });
    expect(fusion?.attributes).toMatchObject({ 'hopline.retrieval.fused': result.chunks.length, 'hopline.hop': 2 });
    expect(result.paths.map(({ path, hits, outcome }) => ({ path, hits, outcome }))).toEqual([
      { path: 'bm25', hits: 1, outcome: 'ok' },
      { path: 'vector', hits: 1, outcome: 'ok' },
    ]);
  });

  it('spans - a failed path is an ERROR span with the error and its breaker state, Elasticsearch named in db.system, and the fusion says degraded', async () => {
    const elasticsearchDown = (lexical: EmbeddedLexicalBackend): LexicalBackend =>
      new Proxy(lexical, {
        get: (target, key, receiver) =>
          key === 'search'
            ? () => Promise.reject(new UnavailableError('connection refused'))
            : key === 'name'
              ? 'elasticsearch'
              : Reflect.get(target, key, receiver),
      });
    const openBreaker: Guard = { state: 'open', call: (work, options) => createDeadlineGuard().call(work, options) };
    const result = await retrieve(await retrieverOver(elasticsearchDown, openBreaker));

    const [bm25] = telemetry.spansNamed('bm25 search');
    expect(bm25?.status.code).toBe(SpanStatusCode.ERROR);
    expect(bm25?.events.map((event) => event.name)).toContain('exception');
    expect(bm25?.attributes).toMatchObject({
      'db.system': 'elasticsearch',
      'db.operation.name': 'search',
      'hopline.breaker.state': 'open',
    });
    expect(telemetry.spansNamed('fusion')[0]?.attributes).toMatchObject({ 'hopline.degraded': true });
    expect(result.paths[0]).toMatchObject({ path: 'bm25', hits: 0, outcome: 'unavailable' });
  });
});
