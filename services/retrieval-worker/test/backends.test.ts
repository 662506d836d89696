import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UnavailableError } from '@hopline/contracts';
import { EmbeddedVectorBackend, HashingEmbedder, OpenAiEmbedder } from '@hopline/retrieval';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeMilvus } from '../../../packages/retrieval/test/milvus/fake-milvus.js';
import { openBackends, type Backends } from '../src/backends.js';
import { configSchema } from '../src/config.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function config(env: Record<string, string>) {
  const dataDir = await mkdtemp(join(tmpdir(), 'hopline-backends-'));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  return configSchema.parse({ DATA_DIR: dataDir, ...env });
}

async function opened(backends: Promise<Backends>): Promise<Backends> {
  const result = await backends;
  cleanups.push(
    () => result.vector.close(),
    () => result.lexical.close(),
  );
  return result;
}

/**
 * Just enough of Elasticsearch for start-up (smartcn present, no index yet) and a batch write (no
 * records yet, every bulk action created); records what it was asked.
 */
async function elasticsearchStub(): Promise<{
  url: string;
  requests: Array<{ method: string; url: string; body: string }>;
}> {
  const requests: Array<{ method: string; url: string; body: string }> = [];
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      requests.push({ method: request.method ?? '', url: request.url ?? '', body });
      const status = request.method === 'HEAD' ? 404 : 200;
      response.writeHead(status, { 'content-type': 'application/json', 'x-elastic-product': 'Elasticsearch' });
      response.end(request.method === 'HEAD' ? undefined : JSON.stringify(answer(request.url ?? '', body)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise((resolve) => server.close(resolve)));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

/** The worker's backends over an Elasticsearch stub and a fake Milvus, with further settings. */
async function openedRemote(env: Record<string, string>) {
  const elasticsearch = await elasticsearchStub();
  const milvus = await startFakeMilvus();
  cleanups.push(() => milvus.close());
  const backends = await opened(
    openBackends(await config({ ELASTICSEARCH_URL: elasticsearch.url, MILVUS_ADDRESS: milvus.address, ...env })),
  );
  return { elasticsearch, milvus, backends };
}

function answer(url: string, body: string): unknown {
  // The entity graph's start-up read: no records, no chunks.
  if (url.includes('/_search')) return { hits: { hits: [] } };
  if (url.includes('/_mget'))
    return { docs: (JSON.parse(body) as { ids: string[] }).ids.map((id) => ({ _id: id, found: false })) };
  if (url.startsWith('/_bulk')) {
    const actions = body
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { index?: { _index: string; _id: string } })
      .filter((line) => line.index);
    return {
      errors: false,
      items: actions.map(({ index }) => ({ index: { ...index, status: 201, result: 'created' } })),
    };
  }
  return { acknowledged: true, tokens: [] };
}

describe('openBackends', () => {
  it('backends - with no remote component configured, the embedded indexes and the hashing embedder run, one ingest consumer per worker', async () => {
    const backends = await opened(openBackends(await config({})));
    // The embedded lexical index, written through the entity graph kept beside it.
    expect(backends.lexical.name).toBe('bm25');
    expect(backends.entityGraph).toHaveProperty('graph');
    expect(backends.vector).toBeInstanceOf(EmbeddedVectorBackend);
    expect(backends.embedder).toBeInstanceOf(HashingEmbedder);
    expect(backends.indexesShared).toBe(false);
    expect(backends.embeddedIndexes).toEqual({ lexical: true, vector: true });
    expect(backends.searchesInProcess).toEqual({ lexical: true, vector: true });
  });

  it('backends - OPENAI_BASE_URL switches to the OpenAI-compatible embedder, and the vector index is sized by EMBEDDING_DIMENSIONS', async () => {
    const backends = await opened(
      openBackends(
        await config({
          OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
          EMBEDDING_MODEL: 'bge-m3',
          EMBEDDING_DIMENSIONS: '1024',
        }),
      ),
    );
    expect(backends.embedder).toBeInstanceOf(OpenAiEmbedder);
    expect(backends.embedder).toMatchObject({ model: 'bge-m3', dimensions: 1024 });
    expect(backends.vector.dimensions).toBe(1024);
    // The vector path waits on the embeddings endpoint: guarded as a remote call.
    expect(backends.searchesInProcess).toEqual({ lexical: true, vector: false });
  });

  it('backends - ELASTICSEARCH_URL and MILVUS_ADDRESS switch both sides to the shared remote indexes, named by config', async () => {
    const { elasticsearch, milvus, backends } = await openedRemote({
      ELASTICSEARCH_INDEX: 'kb-chunks',
      MILVUS_COLLECTION: 'kb_vectors',
      BM25_K1: '1.2',
    });
    expect([backends.lexical.name, backends.vector.name]).toEqual(['elasticsearch', 'milvus']);
    expect(backends.indexesShared).toBe(true);
    // Outside DATA_DIR: a worker never reads the stream again because it finds no index files.
    expect(backends.embeddedIndexes).toEqual({ lexical: false, vector: false });
    expect(backends.searchesInProcess).toEqual({ lexical: false, vector: false });
    // The entity graph is kept over Elasticsearch too, loaded from what the indexes hold.
    expect(backends.entityGraph).toHaveProperty('graph');
    expect(elasticsearch.requests.map((r) => `${r.method} ${r.url.split('?')[0]}`)).toContain(
      'POST /kb-chunks-documents/_search',
    );
    expect(backends.vector.dimensions).toBe(new HashingEmbedder().dimensions);
    const created = elasticsearch.requests.find((r) => r.method === 'PUT' && r.url.startsWith('/kb-chunks'));
    expect(JSON.parse(created?.body ?? '{}')).toMatchObject({
      settings: { index: { similarity: { hopline_bm25: { k1: 1.2, b: 0.75 } } } },
    });
    expect([...milvus.collections.keys()]).toEqual(['kb_vectors', 'kb_vectors_documents']);
  });

  it('backends - the bulk limits of the worker config reach the adapters: ELASTICSEARCH_BULK_MAX_OPERATIONS and MILVUS_UPSERT_BATCH split a batch', async () => {
    const { elasticsearch, milvus, backends } = await openedRemote({
      ELASTICSEARCH_BULK_MAX_OPERATIONS: '2',
      MILVUS_UPSERT_BATCH: '2',
    });
    const doc = { tenantId: 't1', kbId: 'kb1', docId: 'manual', version: 1 };
    const chunks = [0, 1, 2].map((n) => ({
      chunkId: `manual#${n}`,
      tenantId: 't1',
      kbId: 'kb1',
      docId: 'manual',
      docVersion: 1,
      title: 'Manual',
      text: `part ${n}`,
      span: { start: 0, end: 6 },
      dedupeKey: `manual#${n}`,
      effectiveDate: '',
      sourceUri: '',
    }));
    const vectors = await backends.embedder.embed(
      chunks.map((chunk) => chunk.text),
      new AbortController().signal,
    );
    expect(await backends.lexical.writeDocuments([{ op: 'upsert', doc, items: chunks }])).toEqual(['applied']);
    // Written with their entity keys, and linked in this worker's graph at once.
    const chunkBulk = elasticsearch.requests.find((r) => r.url.startsWith('/_bulk'))?.body ?? '';
    expect(JSON.parse(chunkBulk.split('\n')[1] ?? '{}')).toMatchObject({ chunk_id: 'manual#0', entities: ['manual'] });
    if (!('graph' in backends.entityGraph)) throw new Error('a worker over Elasticsearch keeps a graph');
    expect(backends.entityGraph.graph.size.chunks).toBe(3);
    expect(
      await backends.vector.writeDocuments([
        { op: 'upsert', doc, items: chunks.map((chunk, i) => ({ chunk, vector: vectors[i] as Float32Array })) },
      ]),
    ).toEqual(['applied']);
    // Three chunks in bulks of 2 + 1, then the record; three vector rows in upserts of 2 + 1.
    expect(elasticsearch.requests.filter((r) => r.url.startsWith('/_bulk'))).toHaveLength(3);
    expect(milvus.callsOf('Upsert').map((r) => `${String(r.collection_name)} ${String(r.num_rows)}`)).toEqual([
      'hopline_chunks 2',
      'hopline_chunks 1',
      'hopline_chunks_documents 1',
    ]);
  });

  it('backends - an unreachable Elasticsearch fails start-up with UnavailableError', async () => {
    const elasticsearch = await elasticsearchStub();
    await cleanups.pop()?.();
    await expect(openBackends(await config({ ELASTICSEARCH_URL: elasticsearch.url }))).rejects.toBeInstanceOf(
      UnavailableError,
    );
  });

  it('backends - a Milvus collection name that Milvus would refuse fails config validation', async () => {
    await expect(config({ MILVUS_COLLECTION: 'hopline-chunks' })).rejects.toThrow(/letters, digits and underscores/);
  });

  it('backends - a data folder indexed by one embedder refuses to open with another, naming both and how to re-index', async () => {
    const hashing = await config({});
    const first = await openBackends(hashing);
    await Promise.all([first.vector.close(), first.lexical.close()]);
    const model = { ...hashing, OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' };
    await expect(openBackends(model)).rejects.toThrow(
      /built by the embedder hashing-ngram-384 \(384 dimensions\), but this worker is configured with text-embedding-3-small \(1536 dimensions\).*re-index/,
    );
    // Lengths that agree do not make the vector spaces one.
    await expect(openBackends({ ...model, EMBEDDING_DIMENSIONS: 384 })).rejects.toThrow(
      /built by the embedder hashing-ngram-384/,
    );
    const again = await opened(openBackends(hashing));
    expect(again.embedder).toBeInstanceOf(HashingEmbedder);
  });
});
