// The bulk paths of the Elasticsearch and Milvus adapters (issue 12), by the requests they send:
// the same documents written one document per call (as both adapters did before their batch
// paths) and in the worker's batches of 256, against the tests' stand-ins — an Elasticsearch
// client on `@elastic/elasticsearch-mock` that keeps the version records, and the in-process
// Milvus gRPC server — so what is counted is what would go over the wire. Two passes: every
// document new (version 1), then every document replaced (version 2).
// Synthetic documents of two chunks each; 8-dimension vectors (the count of requests does not
// depend on the length). Usage: bench/ingestion-backends.ts [documents] (default 100).
// Each Milvus pass has a client of its own: the SDK pings an idle-looking channel after 55 s and
// drops it when the answer takes over 5 s, which a loaded machine running server and client in
// one process can make happen in a long pass of single writes.
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { dedupeKeyFor, type DocumentWrite, type EmbeddedChunk, type IndexedChunk } from '@hopline/retrieval';
import { createElasticsearchLexicalBackend, createMilvusVectorBackend } from '@hopline/retrieval/remote';
import { esMock, silentLog } from '../packages/retrieval/test/elasticsearch/es-mock.js';
import { startFakeMilvus } from '../packages/retrieval/test/milvus/fake-milvus.js';
import { machineDescription } from './support/machine.js';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const DOCUMENTS = Number(process.argv[2] ?? 100);
/** The retrieval worker's default INGEST_BATCH_SIZE. */
const BATCH = 256;
const CHUNKS_PER_DOCUMENT = 2;
const DIMENSIONS = 8;

type Mode = 'one document per call' | `batches of ${number}`;
const MODES: Mode[] = ['one document per call', `batches of ${BATCH}`];

function chunksOf(docId: string, version: number): IndexedChunk[] {
  return Array.from({ length: CHUNKS_PER_DOCUMENT }, (_, n) => {
    const chunkId = `${docId}#${n}`;
    const text = `Part ${n} of ${docId}, version ${version}.`;
    return {
      chunkId,
      tenantId: 'bench',
      kbId: 'bulk',
      docId,
      docVersion: version,
      title: docId,
      text,
      span: { start: 0, end: text.length },
      dedupeKey: dedupeKeyFor(chunkId, text),
      effectiveDate: '',
      sourceUri: '',
    };
  });
}

function writesOf<Item>(version: number, item: (chunk: IndexedChunk) => Item): Array<DocumentWrite<Item>> {
  return Array.from({ length: DOCUMENTS }, (_, i) => {
    const doc = { tenantId: 'bench', kbId: 'bulk', docId: `doc-${i}`, version };
    return { op: 'upsert', doc, items: chunksOf(doc.docId, version).map(item) };
  });
}

function embedded(chunk: IndexedChunk): EmbeddedChunk {
  return { chunk, vector: Float32Array.from({ length: DIMENSIONS }, (_, i) => (i === 0 ? 1 : 0.1 * i)) };
}

/** Writes them as the mode says and fails the run on any result but `applied`. */
async function write<Item>(
  backend: { writeDocuments(writes: readonly DocumentWrite<Item>[]): Promise<unknown[]> },
  writes: ReadonlyArray<DocumentWrite<Item>>,
  mode: Mode,
): Promise<void> {
  const size = mode === 'one document per call' ? 1 : BATCH;
  for (let start = 0; start < writes.length; start += size) {
    const results = await backend.writeDocuments(writes.slice(start, start + size));
    const wrong = results.find((result) => result !== 'applied');
    if (wrong !== undefined) throw new Error(`a write ended ${String(wrong)}, not applied`);
  }
}

interface Pass {
  requests: number;
  /** Requests by kind, e.g. `POST /_bulk` or `Upsert`. */
  byKind: Record<string, number>;
}

function tally(kinds: readonly string[]): Pass {
  const byKind: Record<string, number> = {};
  for (const kind of kinds) byKind[kind] = (byKind[kind] ?? 0) + 1;
  return { requests: kinds.length, byKind };
}

/** An Elasticsearch that keeps the version records, so that the second pass replaces versions. */
async function elasticsearch(mode: Mode): Promise<{ created: Pass; replaced: Pass }> {
  const es = esMock();
  const records = new Map<string, Record<string, unknown>>();
  es.on('POST', '/hopline-chunks-documents/_mget', (request) => ({
    docs: (request.body as { ids: string[] }).ids.map((id) => {
      const source = records.get(id);
      return source
        ? { _index: 'hopline-chunks-documents', _id: id, found: true, _source: source }
        : { _index: 'hopline-chunks-documents', _id: id, found: false };
    }),
  }));
  es.on('POST', '/_bulk', (request) => {
    const lines = request.body as Array<Record<string, unknown>>;
    const items: unknown[] = [];
    for (let i = 0; i < lines.length; i += 2) {
      const action = (lines[i] as { index: { _index: string; _id: string } }).index;
      const existed = action._index === 'hopline-chunks-documents' && records.has(action._id);
      if (action._index === 'hopline-chunks-documents')
        records.set(action._id, lines[i + 1] as Record<string, unknown>);
      items.push({ index: { ...action, status: existed ? 200 : 201, result: existed ? 'updated' : 'created' } });
    }
    return { errors: false, items };
  });
  es.on('GET', '/hopline-chunks/_refresh', () => ({}));
  es.on('POST', '/hopline-chunks/_delete_by_query', () => ({ deleted: 0, failures: [] }));
  const backend = await createElasticsearchLexicalBackend({ client: es.client, log: silentLog });
  const pass = async (version: number): Promise<Pass> => {
    es.requests.length = 0;
    await write(
      backend,
      writesOf(version, (chunk) => chunk),
      mode,
    );
    return tally(es.requests.map((r) => `${r.method} ${r.path}`));
  };
  const created = await pass(1);
  const replaced = await pass(2);
  await backend.close();
  return { created, replaced };
}

async function milvus(mode: Mode): Promise<{ created: Pass; replaced: Pass }> {
  const fake = await startFakeMilvus();
  const pass = async (version: number): Promise<Pass> => {
    const backend = await createMilvusVectorBackend({ address: fake.address, dimensions: DIMENSIONS });
    fake.calls.length = 0;
    try {
      await write(backend, writesOf(version, embedded), mode);
    } finally {
      await backend.close();
    }
    return tally(fake.calls.map((call) => call.method));
  };
  try {
    const created = await pass(1);
    const replaced = await pass(2);
    const rows = [...(fake.collections.get('hopline_chunks')?.rows.values() ?? [])];
    if (rows.length !== DOCUMENTS * CHUNKS_PER_DOCUMENT || rows.some((row) => row.doc_version !== 2))
      throw new Error(`milvus holds ${rows.length} chunk rows after the second pass, not only version 2's`);
    return { created, replaced };
  } finally {
    await fake.close();
  }
}

const measured: Array<{ backend: string; mode: Mode; created: Pass; replaced: Pass }> = [];
for (const [name, run] of [
  ['elasticsearch', elasticsearch],
  ['milvus', milvus],
] as const) {
  for (const mode of MODES) {
    const started = performance.now();
    measured.push({ backend: name, mode, ...(await run(mode)) });
    console.log(`${name}, ${mode}: ${Math.round(performance.now() - started)} ms`);
  }
}

const results = {
  command: 'node --conditions=@hopline/source --import tsx bench/ingestion-backends.ts [documents]',
  machine: machineDescription(),
  loadAverageAtEnd: Number(loadavg()[0]?.toFixed(1)),
  documents: DOCUMENTS,
  chunksPerDocument: CHUNKS_PER_DOCUMENT,
  batch: BATCH,
  measured,
};
writeFileSync(`${repoRoot}bench/results/ingestion-backends.json`, `${JSON.stringify(results, null, 2)}\n`);

const perDocument = (pass: Pass) => (pass.requests / DOCUMENTS).toFixed(3);
const kinds = (pass: Pass) =>
  Object.entries(pass.byKind)
    .map(([kind, count]) => `${kind} ${count}`)
    .join(', ');
const row = (backend: string, writes: string, pass: (m: (typeof measured)[number]) => Pass) => {
  const [single, batched] = MODES.map((mode) => {
    const found = measured.find((m) => m.backend === backend && m.mode === mode);
    if (!found) throw new Error(`no ${backend} ${mode} run`);
    return pass(found);
  }) as [Pass, Pass];
  return `| ${backend} | ${writes} | ${single.requests} (${perDocument(single)}/doc) | ${batched.requests} (${perDocument(batched)}/doc) | ${(single.requests / batched.requests).toFixed(0)}× | ${kinds(batched)} |`;
};
const lines = [
  '# Bulk paths of the Elasticsearch and Milvus adapters: requests per batch',
  '',
  `Command: \`${results.command}\` (${DOCUMENTS} synthetic documents of ${CHUNKS_PER_DOCUMENT} chunks each, written new and then replaced by a second version; ${DIMENSIONS}-dimension vectors)`,
  '',
  "Against the tests' stand-ins, not live servers: Elasticsearch is `@elastic/elasticsearch-mock` keeping the version records, Milvus the in-process gRPC server serving the SDK's own service definition (`packages/retrieval/test/milvus/fake-milvus.ts`). The figures are requests sent, which do not depend on the machine; wall times are not reported.",
  '',
  `Machine: ${results.machine} (load average ${results.loadAverageAtEnd} at the end; shared by several engineers).`,
  '',
  `| adapter | writes | one document per call | batches of ${BATCH} (the worker's default) | fewer | requests of the batched run |`,
  '| --- | --- | ---: | ---: | ---: | --- |',
  row('elasticsearch', `${DOCUMENTS} new`, (m) => m.created),
  row('elasticsearch', `${DOCUMENTS} replaced`, (m) => m.replaced),
  row('milvus', `${DOCUMENTS} new`, (m) => m.created),
  row('milvus', `${DOCUMENTS} replaced`, (m) => m.replaced),
  '',
  `${DOCUMENTS <= BATCH ? `${DOCUMENTS} documents fit one batch, so "fewer" is the batch's size in documents: a batch's requests do not grow with its documents until a bulk or an upsert reaches its limit (1,000 actions or 5 MiB; 256 rows).` : `${Math.ceil(DOCUMENTS / BATCH)} batches.`}`,
  '',
  `Milvus, batched: per batch and kb one query of the version records, one upsert per ${BATCH} chunk rows, one upsert of the records and one query reading them back; a replacing batch adds one query of the old chunk keys, one delete of them by key and one delete of the old records. One document per call is a batch of one through the same code (before the batch path, a replacement took 6 requests: no key query, a delete by filter instead).`,
  '',
];
writeFileSync(`${repoRoot}bench/results/ingestion-backends.md`, lines.join('\n'));
console.log('wrote bench/results/ingestion-backends.md and bench/results/ingestion-backends.json');
