import { UnavailableError, ValidationError } from '@hopline/contracts';
import { describe, expect, it } from 'vitest';
import type { Embedder, Guard, LexicalBackend, VectorBackend } from '../src/index.js';
import {
  DEFAULT_HYBRID_OPTIONS,
  EmbeddedLexicalBackend,
  EmbeddedVectorBackend,
  HashingEmbedder,
  OpenAiEmbedder,
  createDeadlineGuard,
  createHybridRetriever,
  createIndexer,
  hybridOptionsFor,
} from '../src/index.js';

const scope = { tenantId: 't1', kbIds: ['kb1'] };
const guard = createDeadlineGuard();
const soon = (): number => Date.now() + 2_000;

async function corpus(): Promise<{
  lexical: EmbeddedLexicalBackend;
  vector: EmbeddedVectorBackend;
  embedder: Embedder;
}> {
  const embedder = new HashingEmbedder({ dimensions: 128 });
  const lexical = await EmbeddedLexicalBackend.open();
  const vector = await EmbeddedVectorBackend.open({ dimensions: 128 });
  const indexer = createIndexer({ lexical, vector, embedder });
  const docs = [
    ['lighthouse', 'Lighthouse', 'The lighthouse keeper lit the lamp every evening on the rocky coast.'],
    ['bakery', 'Bakery', 'The bakery sells sourdough bread and croissants each morning.'],
    ['harbour', 'Harbour', 'Fishing boats return to the harbour near the lighthouse at dusk.'],
    ['other-tenant', 'Lighthouse secrets', 'The lighthouse keeper of another tenant.'],
  ] as const;
  for (const [docId, title, text] of docs) {
    const tenantId = docId === 'other-tenant' ? 't2' : 't1';
    await indexer.apply({
      op: 'upsert',
      upsert: { tenantId, kbId: 'kb1', docId, version: 1, title, text, effectiveDate: '', sourceUri: '', metadata: {} },
    });
  }
  return { lexical, vector, embedder };
}

const failing = <T extends LexicalBackend | VectorBackend>(backend: T, error: Error): T =>
  new Proxy(backend, {
    get: (target, key, receiver) =>
      key === 'search' ? () => Promise.reject(error) : Reflect.get(target, key, receiver),
  });

const hanging = <T extends LexicalBackend | VectorBackend>(backend: T): T =>
  new Proxy(backend, {
    get: (target, key, receiver) =>
      key === 'search'
        ? (_request: unknown, signal: AbortSignal) =>
            new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)))
        : Reflect.get(target, key, receiver),
  });

describe('hybridOptionsFor', () => {
  const real: Embedder = new OpenAiEmbedder({ baseURL: 'http://127.0.0.1:9/v1', model: 'bge-m3', dimensions: 1024 });

  it('hybrid options - an OpenAI-compatible model declares nothing and is fused by RRF at weight 1, k 60', () => {
    expect(real.fusion).toBeUndefined();
    expect(hybridOptionsFor(real)).toEqual(DEFAULT_HYBRID_OPTIONS);
    expect(DEFAULT_HYBRID_OPTIONS).toMatchObject({ fusion: 'rrf', rrfK: 60, bm25Weight: 1, vectorWeight: 1 });
  });

  it("hybrid options - the embedder's declaration replaces the defaults, explicit options replace both, undefined ones are ignored", () => {
    const weak: Pick<Embedder, 'fusion'> = { fusion: { method: 'relative-score', vectorWeight: 0.2 } };
    expect(hybridOptionsFor(weak)).toMatchObject({ fusion: 'relative-score', vectorWeight: 0.2, bm25Weight: 1 });
    expect(hybridOptionsFor(weak, { vectorWeight: 0.7, fusion: undefined })).toMatchObject({
      fusion: 'relative-score',
      vectorWeight: 0.7,
    });
    expect(hybridOptionsFor(weak, { fusion: 'rrf', vectorWeight: undefined })).toMatchObject({
      fusion: 'rrf',
      vectorWeight: 0.2,
    });
  });
});

describe('createHybridRetriever', () => {
  it('hybrid - fuses both paths, marks HYBRID, keeps stage scores apart and stamps the hop', async () => {
    const { lexical, vector, embedder } = await corpus();
    const options = { fusion: 'rrf', vectorWeight: 1 } as const;
    const retriever = createHybridRetriever({
      lexical,
      vector,
      embedder,
      lexicalGuard: guard,
      vectorGuard: guard,
      options,
    });
    const result = await retriever.retrieve({ query: 'lighthouse keeper', scope, hop: 2, deadlineUnixMs: soon() });
    expect(result.degraded).toBe(false);
    expect(result.degradedReasons).toEqual([]);
    const top = result.chunks[0];
    expect(top).toMatchObject({
      docId: 'lighthouse',
      foundBy: 'HYBRID',
      hop: 2,
      tenantId: 't1',
      docVersion: 1,
      title: 'Lighthouse',
    });
    expect(top?.scores?.bm25).toBeGreaterThan(0);
    expect(top?.scores?.vector).toBeGreaterThan(0);
    expect(top?.scores?.rrf).toBeCloseTo(2 / 61, 10);
    expect(top?.scores?.rerank).toBeUndefined();
    expect(top?.span).toEqual({ start: 0, end: top?.text.length });
  });

  it('hybrid - fuses as the embedder declares unless told otherwise', async () => {
    const { lexical, vector, embedder } = await corpus();
    expect(embedder.fusion).toEqual({ method: 'relative-score', vectorWeight: 0.1 });
    const declared = createHybridRetriever({ lexical, vector, embedder, lexicalGuard: guard, vectorGuard: guard });
    const [top] = (await declared.retrieve({ query: 'lighthouse keeper', scope, hop: 1, deadlineUnixMs: soon() }))
      .chunks;
    // First on both paths: BM25's full 1 plus the vector path's 0.1.
    expect(top).toMatchObject({ docId: 'lighthouse', foundBy: 'HYBRID' });
    expect(top?.scores?.rrf).toBeCloseTo(1.1, 10);
    const overridden = createHybridRetriever({
      lexical,
      vector,
      embedder,
      lexicalGuard: guard,
      vectorGuard: guard,
      options: { vectorWeight: 0.5 },
    });
    const [topOverridden] = (
      await overridden.retrieve({ query: 'lighthouse keeper', scope, hop: 1, deadlineUnixMs: soon() })
    ).chunks;
    expect(topOverridden?.scores?.rrf).toBeCloseTo(1.5, 10);
  });

  it("hybrid - scope filter hides other tenants' chunks on both paths", async () => {
    const { lexical, vector, embedder } = await corpus();
    const retriever = createHybridRetriever({ lexical, vector, embedder, lexicalGuard: guard, vectorGuard: guard });
    const result = await retriever.retrieve({
      query: 'lighthouse secrets keeper',
      scope,
      hop: 1,
      deadlineUnixMs: soon(),
    });
    expect(result.chunks.every((chunk) => chunk.tenantId === 't1')).toBe(true);
  });

  it('hybrid - a scope of two knowledge bases keeps apart their chunks that share a chunk id', async () => {
    const embedder = new HashingEmbedder({ dimensions: 128 });
    const lexical = await EmbeddedLexicalBackend.open();
    const vector = await EmbeddedVectorBackend.open({ dimensions: 128 });
    const indexer = createIndexer({ lexical, vector, embedder });
    // hr/handbook.md and it/handbook.md, ingested into their own knowledge bases: both `handbook#0`.
    const handbooks = [
      ['hr', 'Holiday leave is booked with your manager a month ahead.'],
      ['it', 'Reset a forgotten password at the service desk.'],
    ] as const;
    for (const [kbId, text] of handbooks) {
      await indexer.apply({
        op: 'upsert',
        upsert: {
          tenantId: 't1',
          kbId,
          docId: 'handbook',
          version: 1,
          title: 'Handbook',
          text,
          effectiveDate: '',
          sourceUri: '',
          metadata: {},
        },
      });
    }
    const retriever = createHybridRetriever({ lexical, vector, embedder, lexicalGuard: guard, vectorGuard: guard });
    const { chunks } = await retriever.retrieve({
      query: 'handbook password',
      scope: { tenantId: 't1', kbIds: ['hr', 'it'] },
      hop: 1,
      deadlineUnixMs: soon(),
    });
    expect(chunks.map((chunk) => [chunk.kbId, chunk.chunkId]).sort()).toEqual([
      ['hr', 'handbook#0'],
      ['it', 'handbook#0'],
    ]);
    // Both matched `handbook` in the title; only the IT one matched `password` as well.
    const [hrScores, itScores] = ['hr', 'it'].map((kbId) => chunks.find((chunk) => chunk.kbId === kbId)?.scores);
    expect(itScores?.bm25).toBeGreaterThan(hrScores?.bm25 ?? Infinity);
  });

  it('hybrid - topK bounds the fused list, the default keeps 30', async () => {
    const { lexical, vector, embedder } = await corpus();
    const retriever = createHybridRetriever({
      lexical,
      vector,
      embedder,
      lexicalGuard: guard,
      vectorGuard: guard,
      options: { keep: 2 },
    });
    expect(
      (await retriever.retrieve({ query: 'the lighthouse bakery harbour', scope, hop: 1, deadlineUnixMs: soon() }))
        .chunks,
    ).toHaveLength(2);
    expect(
      (
        await retriever.retrieve({
          query: 'the lighthouse bakery harbour',
          scope,
          topK: 1,
          hop: 1,
          deadlineUnixMs: soon(),
        })
      ).chunks,
    ).toHaveLength(1);
  });

  it('hybrid - a query that embeds as the zero vector (stop words only) gets no vector hits', async () => {
    const { lexical, vector, embedder } = await corpus();
    const query = 'what is the';
    const [embedded] = await embedder.embed([query], new AbortController().signal);
    expect(embedded?.every((value) => value === 0)).toBe(true);
    const retriever = createHybridRetriever({ lexical, vector, embedder, lexicalGuard: guard, vectorGuard: guard });
    const result = await retriever.retrieve({ query, scope, hop: 1, deadlineUnixMs: soon() });
    expect(result.degraded).toBe(false);
    expect(result.paths.find((path) => path.path === 'vector')).toMatchObject({ hits: 0, outcome: 'ok' });
    expect(result.chunks.filter((chunk) => chunk.scores?.vector !== undefined)).toEqual([]);
  });

  it('hybrid - a failing BM25 path leaves the vector path to answer, flagged degraded', async () => {
    const { lexical, vector, embedder } = await corpus();
    const retriever = createHybridRetriever({
      lexical: failing(lexical, new UnavailableError('connection refused')),
      vector,
      embedder,
      lexicalGuard: guard,
      vectorGuard: guard,
    });
    const result = await retriever.retrieve({ query: 'sourdough bread', scope, hop: 1, deadlineUnixMs: soon() });
    expect(result.degraded).toBe(true);
    expect(result.degradedReasons).toEqual(['bm25 search failed (unavailable): connection refused']);
    expect(result.chunks[0]).toMatchObject({ docId: 'bakery', foundBy: 'VECTOR' });
    expect(result.chunks[0]?.scores?.bm25).toBeUndefined();
  });

  it('hybrid - a vector path past its deadline leaves BM25 to answer, flagged degraded', async () => {
    const { lexical, vector, embedder } = await corpus();
    const retriever = createHybridRetriever({
      lexical,
      vector: hanging(vector),
      embedder,
      lexicalGuard: guard,
      vectorGuard: guard,
    });
    const result = await retriever.retrieve({
      query: 'sourdough bread',
      scope,
      hop: 1,
      deadlineUnixMs: Date.now() + 50,
    });
    expect(result.degraded).toBe(true);
    expect(result.degradedReasons[0]).toMatch(/^vector search failed \(deadline_exceeded\)/);
    expect(result.chunks[0]).toMatchObject({ docId: 'bakery', foundBy: 'BM25' });
  });

  it('hybrid - an embedder failure degrades the vector path only', async () => {
    const { lexical, vector } = await corpus();
    const broken: Embedder = {
      model: 'broken',
      dimensions: 128,
      embed: () => Promise.reject(new UnavailableError('embedding endpoint down')),
    };
    const retriever = createHybridRetriever({
      lexical,
      vector,
      embedder: broken,
      lexicalGuard: guard,
      vectorGuard: guard,
    });
    const result = await retriever.retrieve({ query: 'bread', scope, hop: 1, deadlineUnixMs: soon() });
    expect(result.degradedReasons).toEqual(['vector search failed (unavailable): embedding endpoint down']);
    expect(result.chunks.length).toBeGreaterThan(0);
  });

  it('hybrid - both paths down gives an empty result with both reasons, without waiting for the deadline', async () => {
    const { lexical, vector, embedder } = await corpus();
    const retriever = createHybridRetriever({
      lexical: failing(lexical, new UnavailableError('es down')),
      vector: failing(vector, new UnavailableError('milvus down')),
      embedder,
      lexicalGuard: guard,
      vectorGuard: guard,
    });
    const started = Date.now();
    const result = await retriever.retrieve({ query: 'bread', scope, hop: 1, deadlineUnixMs: Date.now() + 60_000 });
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(result).toMatchObject({ chunks: [], degraded: true });
    expect(result.degradedReasons).toHaveLength(2);
  });

  it('hybrid - each path goes through its own guard', async () => {
    const { lexical, vector, embedder } = await corpus();
    const calls: string[] = [];
    const named = (name: string): Guard => ({
      call: (work, options) => {
        calls.push(name);
        return guard.call(work, options);
      },
    });
    const retriever = createHybridRetriever({
      lexical,
      vector,
      embedder,
      lexicalGuard: named('lexical'),
      vectorGuard: named('vector'),
    });
    await retriever.retrieve({ query: 'bread', scope, hop: 1, deadlineUnixMs: soon() });
    expect(calls.sort()).toEqual(['lexical', 'vector']);
  });

  it('hybrid - HyDE text reaches the vector path only', async () => {
    const { lexical, vector } = await corpus();
    const embedded: string[][] = [];
    const hashing = new HashingEmbedder({ dimensions: 128 });
    const spy: Embedder = {
      model: hashing.model,
      dimensions: 128,
      embed: (texts, signal) => {
        embedded.push([...texts]);
        return hashing.embed(texts, signal);
      },
    };
    const queries: string[] = [];
    const lexicalSpy = new Proxy(lexical, {
      get: (target, key, receiver) =>
        key === 'search'
          ? (request: { query: string }, signal: AbortSignal) => {
              queries.push(request.query);
              return target.search(request as never, signal);
            }
          : Reflect.get(target, key, receiver),
    });
    const retriever = createHybridRetriever({
      lexical: lexicalSpy,
      vector,
      embedder: spy,
      lexicalGuard: guard,
      vectorGuard: guard,
    });
    await retriever.retrieve({
      query: 'what do they bake',
      hydeText: 'sourdough bread and croissants',
      scope,
      hop: 1,
      deadlineUnixMs: soon(),
    });
    expect(queries).toEqual(['what do they bake']);
    expect(embedded).toEqual([['what do they bake', 'sourdough bread and croissants']]);
  });

  it('hybrid - a bad scope or an empty query is a validation error, not a degraded result', async () => {
    const { lexical, vector, embedder } = await corpus();
    const retriever = createHybridRetriever({ lexical, vector, embedder, lexicalGuard: guard, vectorGuard: guard });
    await expect(
      retriever.retrieve({ query: 'x', scope: { tenantId: 't1', kbIds: [] }, hop: 1, deadlineUnixMs: soon() }),
    ).rejects.toBeInstanceOf(ValidationError);
    await expect(retriever.retrieve({ query: '  ', scope, hop: 1, deadlineUnixMs: soon() })).rejects.toBeInstanceOf(
      ValidationError,
    );
  });

  it('hybrid - a caller that cancels gets CancelledError', async () => {
    const { lexical, vector, embedder } = await corpus();
    const retriever = createHybridRetriever({
      lexical: hanging(lexical),
      vector: hanging(vector),
      embedder,
      lexicalGuard: guard,
      vectorGuard: guard,
    });
    const controller = new AbortController();
    const pending = retriever.retrieve({
      query: 'bread',
      scope,
      hop: 1,
      deadlineUnixMs: soon(),
      signal: controller.signal,
    });
    controller.abort();
    await expect(pending).rejects.toMatchObject({ code: 'cancelled' });
  });
});
