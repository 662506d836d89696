import { mkdir, mkdtemp, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import type { IngestCommand__Output } from '@hopline/contracts';
import type * as HnswLib from 'hnswlib-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  AdaptiveVectorIndex,
  EmbeddedLexicalBackend,
  EmbeddedVectorBackend,
  HashingEmbedder,
  HnswVectorIndex,
  createEntityGraph,
  createIndexer,
  loadEntityGraph,
} from '../src/index.js';
import { chunkOf, never } from './fixtures.js';

const embedder = new HashingEmbedder({ dimensions: 64 });
const WORDS = [
  'harbour',
  'lighthouse',
  'ledger',
  'orchard',
  'glacier',
  'comet',
  'violin',
  'quarry',
  'meadow',
  'falcon',
];

/**
 * Upserts over two kbs (one past the flat limit, one under it), new versions and deletes, in a
 * fixed order; first, the delete of a document never indexed, the only one of its kb, and of
 * one indexed before, the only one of another.
 */
function commands(): IngestCommand__Output[] {
  const out: IngestCommand__Output[] = [];
  const text = (i: number, version: number) =>
    Array.from({ length: 12 }, (_, w) => WORDS[(i * 7 + w * 3 + version) % WORDS.length]).join(' ') + ` item${i}`;
  const upsert = (kbId: string, i: number, version: number): IngestCommand__Output => ({
    op: 'upsert',
    upsert: {
      tenantId: 't1',
      kbId,
      docId: `d${i}`,
      version,
      title: `Title ${i}`,
      text: text(i, version),
      effectiveDate: '',
      sourceUri: '',
      metadata: {},
    },
  });
  out.push({ op: 'delete', delete: { tenantId: 't1', kbId: 'ghost', docId: 'd0', version: 1 } });
  out.push(upsert('emptied', 0, 1));
  out.push({ op: 'delete', delete: { tenantId: 't1', kbId: 'emptied', docId: 'd0', version: 2 } });
  for (let i = 0; i < 120; i++) out.push(upsert('big', i, 1));
  for (let i = 0; i < 20; i++) out.push(upsert('small', i, 1));
  for (let i = 0; i < 120; i += 5) out.push(upsert('big', i, 2));
  for (let i = 0; i < 120; i += 9)
    out.push({ op: 'delete', delete: { tenantId: 't1', kbId: 'big', docId: `d${i}`, version: 3 } });
  for (let i = 120; i < 150; i++) out.push(upsert('big', i, 1));
  return out;
}

/** Counts the vectors still in the flat buffer, not yet in their graph, at each snapshot. */
class BufferAtSave extends AdaptiveVectorIndex {
  readonly bufferedAtSave: number[] = [];

  override save(dir: string): Promise<void> {
    this.bufferedAtSave.push(this.buffered());
    return super.save(dir);
  }
}

async function openBackends(dataDir: string, snapshotAfter: number) {
  // The graph builder moves one vector each time the test lets it (after each batch), so the
  // snapshots come while the buffer holds vectors and the graph holds others.
  const waiting: Array<() => void> = [];
  const nextTurn = () => new Promise<void>((resolve) => waiting.push(resolve));
  const letBuilderMove = () => waiting.splice(0).forEach((resolve) => resolve());
  const index = new BufferAtSave(embedder.dimensions, { flatLimit: 40, moveSliceMs: 0, nextTurn });
  const [lexical, vector] = await Promise.all([
    EmbeddedLexicalBackend.open({ dataDir, durable: false, snapshotAfter }),
    EmbeddedVectorBackend.open({
      dimensions: embedder.dimensions,
      dataDir,
      durable: false,
      snapshotAfter,
      createIndex: () => index,
    }),
  ]);
  unclosed.push(lexical, vector);
  return { lexical, vector, index, letBuilderMove };
}

/** Applies the commands in batches of 16 and returns backends reopened from the folder, as after a crash (no close). */
async function ingestAndRestart(dataDir: string, snapshotAfter: number) {
  const first = await openBackends(dataDir, snapshotAfter);
  const indexer = createIndexer({ ...first, embedder });
  const all = commands();
  for (let start = 0; start < all.length; start += 16) {
    await indexer.applyAll(all.slice(start, start + 16));
    first.letBuilderMove();
  }
  const tail = { lexical: first.lexical.tail, vector: first.vector.tail };
  return { tail, bufferedAtSave: first.index.bufferedAtSave, ...(await openBackends(dataDir, snapshotAfter)) };
}

let dirs: string[] = [];
// The backends `openBackends` opened, crashed ones included: a crash is simulated by reopening
// without closing, and their files are closed only once the test is done with the folder.
let unclosed: Array<{ close(): Promise<void> }> = [];
beforeEach(() => {
  dirs = [];
  unclosed = [];
});
afterEach(async () => {
  // One at a time: two of them closing at once would write the same folder's snapshot together.
  for (const backend of unclosed) await backend.close();
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});
const tempDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'hopline-snapshot-'));
  dirs.push(dir);
  return dir;
};

describe('index snapshots', () => {
  it('persistence - a snapshot and the log tail after it restore what replaying the whole log does', async () => {
    const snapshotted = await ingestAndRestart(await tempDir(), 100);
    const replayed = await ingestAndRestart(await tempDir(), Number.POSITIVE_INFINITY);
    // The first took snapshots and left a tail to replay; the second replays everything.
    expect(snapshotted.tail.lexical).toBeGreaterThan(0);
    expect(snapshotted.tail.lexical).toBeLessThan(100);
    expect(replayed.tail.lexical).toBe(commands().length);
    // At least one snapshot was taken while vectors waited in the buffer for the graph.
    expect(Math.max(...snapshotted.bufferedAtSave)).toBeGreaterThan(0);

    expect(await snapshotted.lexical.countChunks()).toEqual(await replayed.lexical.countChunks());
    expect(await snapshotted.vector.countChunks()).toEqual(await replayed.vector.countChunks());
    // A kb whose only document was deleted before it was indexed never held anything: not listed;
    // one whose only document was deleted after is, as empty.
    const listed = await snapshotted.lexical.countChunks();
    expect(listed.map((count) => count.kbId)).not.toContain('ghost');
    expect(listed).toContainEqual({ tenantId: 't1', kbId: 'emptied', documents: 0, chunks: 0 });
    const ghost = { tenantId: 't1', kbId: 'ghost', docId: 'd0' };
    expect(await snapshotted.lexical.documentState(ghost)).toEqual(await replayed.lexical.documentState(ghost));
    expect(await snapshotted.lexical.documentState(ghost)).toMatchObject({ deleted: true });
    for (const kbId of ['big', 'small']) {
      for (let i = 0; i < 150; i++) {
        const key = { tenantId: 't1', kbId, docId: `d${i}` };
        expect(await snapshotted.lexical.documentState(key)).toEqual(await replayed.lexical.documentState(key));
        expect(await snapshotted.vector.documentState(key)).toEqual(await replayed.vector.documentState(key));
      }
    }
    for (const [query, kbIds] of [
      ['harbour lighthouse item7', ['big']],
      ['glacier comet', ['big', 'small']],
      ['violin quarry item131', ['big']],
      ['meadow falcon item3', ['small']],
    ] as const) {
      const scope = { tenantId: 't1', kbIds };
      const lexicalHits = async (backend: EmbeddedLexicalBackend) =>
        (await backend.search({ scope, query, limit: 10 }, never)).map(({ chunk, score }) => [
          chunk.chunkId,
          chunk.text,
          Math.round(score * 1e4),
        ]);
      expect(await lexicalHits(snapshotted.lexical)).toEqual(await lexicalHits(replayed.lexical));
      const [vector] = await embedder.embed([query], never);
      const vectorHits = async (backend: EmbeddedVectorBackend) =>
        (await backend.search({ scope, vector: vector as Float32Array, limit: 10 }, never)).map(({ chunk, score }) => [
          chunk.chunkId,
          chunk.text,
          Math.round(score * 1e4),
        ]);
      expect(await vectorHits(snapshotted.vector)).toEqual(await vectorHits(replayed.vector));
    }
  });

  it('persistence - chunks and vectors are bytes in the snapshot, not text in its entries; a vector the graph keeps is not written twice', async () => {
    const dataDir = await tempDir();
    const open = () =>
      EmbeddedVectorBackend.open({
        dimensions: embedder.dimensions,
        dataDir,
        durable: false,
        createIndex: (dims) => new AdaptiveVectorIndex(dims, { flatLimit: 2 }),
      });
    const vector = await open();
    const chunks = [0, 1, 2].map((i) =>
      chunkOf({ kbId: 'graphed', docId: 'doc', chunkId: `doc#${i}`, text: `harbour text ${i}` }),
    );
    const items = chunks.map((chunk) => ({ chunk, vector: embedder.embedOne(chunk.text) }));
    const flatChunk = chunkOf({ kbId: 'flat', docId: 'one', chunkId: 'one#0', text: 'a flat partition' });
    const flatItem = { chunk: flatChunk, vector: embedder.embedOne(flatChunk.text) };
    await vector.upsertDocument({ tenantId: 't1', kbId: 'graphed', docId: 'doc', version: 1 }, items);
    await vector.upsertDocument({ tenantId: 't1', kbId: 'flat', docId: 'one', version: 1 }, [flatItem]);
    while (vector.bufferedVectors() > 0) await new Promise((resolve) => setTimeout(resolve, 5));
    await vector.close();

    const snapshot = join(dataDir, 'vector.snapshot');
    // A format 5 entry: [tenantId, kbId, docId, version, items].
    const entries = (await readFile(join(snapshot, 'documents.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as [string, string, string, number, Array<[string, unknown, unknown]>]);
    const graphed = entries.find((entry) => entry[1] === 'graphed')?.[4] ?? [];
    const flat = entries.find((entry) => entry[1] === 'flat')?.[4] ?? [];
    // No chunk text in the entries; the graph's vectors only in the graph's file, the flat one as bytes.
    expect(JSON.stringify(entries)).not.toContain('harbour');
    expect(graphed.map(([chunkId, , vector]) => [chunkId, vector])).toEqual([
      ['doc#0', null],
      ['doc#1', null],
      ['doc#2', null],
    ]);
    const [offset, bytes] = flat[0]?.[2] as [number, number];
    expect(offset % 4).toBe(0);
    expect(bytes).toBe(64 * 4);
    const itemBytes = await readFile(join(snapshot, 'items.bin'));
    const chunkBytes = [...chunks, flatChunk].reduce((sum, chunk) => sum + Buffer.byteLength(JSON.stringify(chunk)), 0);
    expect(itemBytes.byteLength).toBeLessThan(chunkBytes + 2 * 64 * 4);

    const reopened = await open();
    const [best] = await reopened.search(
      { scope: { tenantId: 't1', kbIds: ['graphed'] }, vector: items[2]!.vector, limit: 1 },
      never,
    );
    expect(best?.chunk).toEqual(chunks[2]);
    expect(best?.score).toBeCloseTo(1, 5);
    // A document's exact search reads the vectors back from the graph.
    const selected = await reopened.search(
      { scope: { tenantId: 't1', kbIds: ['graphed'], docIds: ['doc'] }, vector: items[1]!.vector, limit: 3 },
      never,
    );
    expect(selected.map((hit) => hit.chunk.chunkId).sort()).toEqual(['doc#0', 'doc#1', 'doc#2']);
    expect(selected[0]?.chunk.chunkId).toBe('doc#1');
    expect(selected[0]?.score).toBeCloseTo(1, 5);
    const [flatBest] = await reopened.search(
      { scope: { tenantId: 't1', kbIds: ['flat'] }, vector: flatItem.vector, limit: 1 },
      never,
    );
    expect(flatBest?.chunk).toEqual(flatChunk);
    // Written again unread, the chunks keep their bytes; the next start reads them the same.
    await reopened.upsertDocument({ tenantId: 't1', kbId: 'flat', docId: 'two', version: 1 }, [
      { chunk: { ...flatChunk, docId: 'two', chunkId: 'two#0' }, vector: flatItem.vector },
    ]);
    await reopened.close();
    const third = await open();
    expect((await third.readDocuments('t1', 'graphed'))[0]?.items.map((item) => item.chunk)).toEqual(chunks);
    await third.close();

    // Item bytes changed after they were written are refused by their checksum.
    const changed = Buffer.from(await readFile(join(snapshot, 'items.bin')));
    changed.write('harbor', changed.indexOf('harbour'));
    await writeFile(join(snapshot, 'items.bin'), changed);
    await expect(open()).rejects.toThrow(/its items were changed or damaged/);
    // Item bytes cut short are refused, not loaded with chunks or vectors missing.
    await truncate(join(snapshot, 'items.bin'), 500);
    await expect(open()).rejects.toThrow(/bytes of items but holds 500/);
  });

  it('persistence - a vector snapshot whose HNSW graph lost the label of a live chunk fails the start, saying how to re-index', async () => {
    const dataDir = await tempDir();
    const open = () =>
      EmbeddedVectorBackend.open({
        dimensions: embedder.dimensions,
        dataDir,
        durable: false,
        createIndex: (dims) => new HnswVectorIndex(dims),
      });
    const vector = await open();
    const items = [0, 1, 2].map((i) => {
      const chunk = chunkOf({ kbId: 'kb', docId: 'doc', chunkId: `doc#${i}`, text: `harbour text ${i}` });
      return { chunk, vector: embedder.embedOne(chunk.text) };
    });
    await vector.upsertDocument({ tenantId: 't1', kbId: 'kb', docId: 'doc', version: 1 }, items);
    await vector.close();
    // As hnswlib's replaceDeleted left graphs before each label kept its own slot: doc#1's slot,
    // deleted, taken by another label. Its vector is in no other file: nothing to rebuild it from.
    const file = join(dataDir, 'vector.snapshot', 'graph-0.hnsw');
    const { HierarchicalNSW } = createRequire(import.meta.url)('hnswlib-node') as typeof HnswLib;
    const graph = new HierarchicalNSW('ip', embedder.dimensions);
    await graph.readIndex(file, true);
    graph.markDelete(1);
    graph.addPoint(Array.from(items[0]!.vector), 3, true);
    await graph.writeIndex(file);
    await expect(open()).rejects.toThrow(
      /graph-0\.hnsw: the HNSW graph's labels do not match .*"Changing the embedder"/,
    );
  });

  it('persistence - a snapshot changed after it was written is refused by its checksums, not loaded unchecked', async () => {
    const dataDir = await tempDir();
    const lexical = await EmbeddedLexicalBackend.open({ dataDir, durable: false });
    const doc = { tenantId: 't1', kbId: 'kb', docId: 'doc', version: 1 };
    const chunk = chunkOf({ kbId: 'kb', docId: 'doc', text: 'the harbour ledger', entities: ['harbour'] });
    await lexical.upsertDocument(doc, [chunk]);
    await lexical.close();
    const snapshot = join(dataDir, 'lexical.snapshot');
    const manifest = JSON.parse(await readFile(join(snapshot, 'manifest.json'), 'utf8')) as { format: number };
    expect(manifest.format).toBe(5);
    const documents = join(snapshot, 'documents.jsonl');
    const items = join(snapshot, 'items.bin');
    const [writtenDocuments, writtenItems] = await Promise.all([readFile(documents), readFile(items)]);

    // Format 5: the chunk is bytes in items.bin, its entity keys in the entry (for the graph).
    expect(writtenDocuments.toString()).not.toContain('ledger');
    expect(writtenDocuments.toString()).toContain('["harbour"]');
    expect(writtenItems.toString()).toContain('the harbour ledger');
    const reopened = await EmbeddedLexicalBackend.open({ dataDir, durable: false });
    expect((await reopened.readDocuments('t1', 'kb'))[0]?.items).toEqual([chunk]);
    await reopened.close();

    // Still valid JSON, still a valid chunk: only the checksums can tell that it is not what was written.
    await writeFile(items, writtenItems.toString().replace('harbour', 'harbors'));
    await expect(EmbeddedLexicalBackend.open({ dataDir, durable: false })).rejects.toThrow(
      /its items were changed or damaged/,
    );
    await writeFile(items, writtenItems);
    await writeFile(documents, writtenDocuments.toString().replace('"harbour"', '"harbors"'));
    await expect(EmbeddedLexicalBackend.open({ dataDir, durable: false })).rejects.toThrow(
      /does not match its checksums/,
    );
  });

  it('persistence - a restart loads the lexical index and links the entity graph without parsing a chunk', async () => {
    const dataDir = await tempDir();
    const lexical = await EmbeddedLexicalBackend.open({ dataDir, durable: false });
    const doc = { tenantId: 't1', kbId: 'kb', docId: 'doc', version: 1 };
    await lexical.upsertDocument(doc, [
      chunkOf({ kbId: 'kb', docId: 'doc', text: 'the harbour ledger', entities: ['harbour'] }),
    ]);
    await lexical.close();
    // The chunk's bytes made unparseable, with checksums that vouch for them: only a parse can fail.
    const snapshot = join(dataDir, 'lexical.snapshot');
    const items = Buffer.alloc((await readFile(join(snapshot, 'items.bin'))).byteLength, '~');
    await writeFile(join(snapshot, 'items.bin'), items);
    const manifestFile = join(snapshot, 'manifest.json');
    const manifest = JSON.parse(await readFile(manifestFile, 'utf8')) as { checksums: Record<string, number> };
    await writeFile(
      manifestFile,
      JSON.stringify({ ...manifest, checksums: { ...manifest.checksums, items: crc32(items) } }),
    );

    const reopened = await EmbeddedLexicalBackend.open({ dataDir, durable: false });
    const graph = createEntityGraph(() => []);
    await loadEntityGraph(graph, reopened);
    expect(graph.size).toEqual({ chunks: 1, entities: 1, edges: 1 });
    expect(await reopened.countChunks()).toEqual([{ tenantId: 't1', kbId: 'kb', documents: 1, chunks: 1 }]);
    // The first read of the chunk is its parse.
    await expect(
      reopened.search({ scope: { tenantId: 't1', kbIds: ['kb'] }, query: 'harbour', limit: 1 }, never),
    ).rejects.toThrow(SyntaxError);
    await reopened.close();
  });

  it('persistence - a format 4 lexical snapshot (whole chunks in its entries) still loads, and is written as format 5 at close', async () => {
    const dataDir = await tempDir();
    const snapshot = join(dataDir, 'lexical.snapshot');
    const doc = { tenantId: 't1', kbId: 'kb', docId: 'doc', version: 1 };
    const chunk = chunkOf({ kbId: 'kb', docId: 'doc', text: 'a format four ledger', entities: ['ledger'] });
    const lexical = await EmbeddedLexicalBackend.open({ dataDir, durable: false });
    await lexical.upsertDocument(doc, [chunk]);
    await lexical.close();
    // The index files are the same in both formats; the entries and the manifest are format 4's.
    const documents = Buffer.from(`${JSON.stringify({ op: 'upsert', doc, items: [chunk] })}\n`);
    await writeFile(join(snapshot, 'documents.jsonl'), documents);
    await writeFile(join(snapshot, 'items.bin'), Buffer.alloc(0));
    const manifestFile = join(snapshot, 'manifest.json');
    await writeFile(
      manifestFile,
      JSON.stringify({ format: 4, documents: 1, itemBytes: 0, checksums: { documents: crc32(documents), items: 0 } }),
    );

    const upgraded = await EmbeddedLexicalBackend.open({ dataDir, durable: false });
    const graph = createEntityGraph(() => []);
    await loadEntityGraph(graph, upgraded);
    expect(graph.size).toEqual({ chunks: 1, entities: 1, edges: 1 });
    const search = async (backend: EmbeddedLexicalBackend) =>
      (await backend.search({ scope: { tenantId: 't1', kbIds: ['kb'] }, query: 'format four', limit: 1 }, never)).map(
        (hit) => hit.chunk,
      );
    expect(await search(upgraded)).toEqual([chunk]);
    await upgraded.close();
    expect(JSON.parse(await readFile(manifestFile, 'utf8'))).toMatchObject({ format: 5 });
    expect(await readFile(join(snapshot, 'documents.jsonl'), 'utf8')).not.toContain('format four');
    const reopened = await EmbeddedLexicalBackend.open({ dataDir, durable: false });
    expect(await search(reopened)).toEqual([chunk]);
    expect((await reopened.readDocuments('t1', 'kb'))[0]?.items).toEqual([chunk]);
    await reopened.close();
  });

  it('persistence - a format 4 vector snapshot (log entries of named items) still loads, and is written as format 5 at close', async () => {
    const dataDir = await tempDir();
    const snapshot = join(dataDir, 'vector.snapshot');
    const doc = { tenantId: 't1', kbId: 'kb', docId: 'doc', version: 1 };
    const chunk = chunkOf({ kbId: 'kb', docId: 'doc', text: 'a format four vector' });
    const stored = embedder.embedOne(chunk.text);
    const open = () => EmbeddedVectorBackend.open({ dimensions: embedder.dimensions, dataDir, durable: false });
    const vector = await open();
    await vector.upsertDocument(doc, [{ chunk, vector: stored }]);
    await vector.close();
    // Format 5's entry [tenantId, kbId, docId, version, [[chunkId, chunk, vector]]] as format 4 wrote it.
    const documentsFile = join(snapshot, 'documents.jsonl');
    const [[, , , , [[chunkId, chunkRef, vectorRef]]]] = [JSON.parse(await readFile(documentsFile, 'utf8'))] as [
      [string, string, string, number, [[string, unknown, unknown]]],
    ];
    const documents = Buffer.from(
      `${JSON.stringify({ op: 'upsert', doc, items: [{ chunkId, chunk: chunkRef, vector: vectorRef }] })}\n`,
    );
    await writeFile(documentsFile, documents);
    const manifestFile = join(snapshot, 'manifest.json');
    const written = JSON.parse(await readFile(manifestFile, 'utf8')) as { checksums: { items: number } };
    await writeFile(
      manifestFile,
      JSON.stringify({
        ...written,
        format: 4,
        checksums: { documents: crc32(documents), items: written.checksums.items },
      }),
    );

    const upgraded = await open();
    const search = async (backend: EmbeddedVectorBackend) =>
      (await backend.search({ scope: { tenantId: 't1', kbIds: ['kb'] }, vector: stored, limit: 1 }, never)).map(
        (hit) => hit.chunk,
      );
    expect(await search(upgraded)).toEqual([chunk]);
    await upgraded.close();
    expect(JSON.parse(await readFile(manifestFile, 'utf8'))).toMatchObject({ format: 5 });
    expect(await readFile(documentsFile, 'utf8')).not.toContain('"op"');
    const reopened = await open();
    expect(await search(reopened)).toEqual([chunk]);
    await reopened.close();
  });

  it('persistence - a format 2 snapshot (no checksums) still loads, each entry validated', async () => {
    const dataDir = await tempDir();
    const snapshot = join(dataDir, 'lexical.snapshot');
    const lexical = await EmbeddedLexicalBackend.open({ dataDir, durable: false });
    const doc = { tenantId: 't1', kbId: 'kb', docId: 'doc', version: 1 };
    await lexical.upsertDocument(doc, [chunkOf({ kbId: 'kb', docId: 'doc', text: 'the harbour ledger' })]);
    await lexical.close();
    const manifestFile = join(snapshot, 'manifest.json');
    const { checksums: _, ...format2 } = JSON.parse(await readFile(manifestFile, 'utf8')) as Record<string, unknown>;
    await writeFile(manifestFile, JSON.stringify({ ...format2, format: 2 }));

    const reopened = await EmbeddedLexicalBackend.open({ dataDir, durable: false });
    const hits = await reopened.search({ scope: { tenantId: 't1', kbIds: ['kb'] }, query: 'harbour', limit: 1 }, never);
    expect(hits.map((hit) => hit.chunk.text)).toEqual(['the harbour ledger']);
    await reopened.close();
    // Closed, the older snapshot is written again in the current format; presented as format 2 once more:
    expect(JSON.parse(await readFile(manifestFile, 'utf8'))).toMatchObject({ format: 5 });
    await writeFile(manifestFile, JSON.stringify({ ...format2, format: 2 }));

    // Without checksums an entry is validated as it is read: a chunk with an empty id is refused.
    const documents = join(snapshot, 'documents.jsonl');
    await writeFile(documents, (await readFile(documents, 'utf8')).replace('"doc#0"', '""'));
    await expect(EmbeddedLexicalBackend.open({ dataDir, durable: false })).rejects.toThrow(/too_small/);
  });

  it('persistence - a format 1 snapshot (vectors as base64 in the entries) still loads', async () => {
    const dataDir = await tempDir();
    const snapshot = join(dataDir, 'vector.snapshot');
    await mkdir(snapshot, { recursive: true });
    const chunk = chunkOf({ kbId: 'kb', docId: 'old', text: 'an older snapshot' });
    const stored = embedder.embedOne('an older snapshot');
    const base64 = Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength).toString('base64');
    const doc = { tenantId: 't1', kbId: 'kb', docId: 'old', version: 1 };
    await writeFile(
      join(snapshot, 'documents.jsonl'),
      `${JSON.stringify({ op: 'upsert', doc, items: [{ chunk, vector: base64 }] })}\n`,
    );
    await writeFile(join(snapshot, 'hnsw.json'), JSON.stringify({ dimensions: embedder.dimensions, partitions: [] }));
    await writeFile(join(snapshot, 'manifest.json'), JSON.stringify({ format: 1, documents: 1 }));

    const vector = await EmbeddedVectorBackend.open({ dimensions: embedder.dimensions, dataDir, durable: false });
    expect(await vector.documentState({ tenantId: 't1', kbId: 'kb', docId: 'old' })).toMatchObject({
      version: 1,
      chunks: 1,
    });
    const [best] = await vector.search({ scope: { tenantId: 't1', kbIds: ['kb'] }, vector: stored, limit: 1 }, never);
    expect(best?.chunk.chunkId).toBe(chunk.chunkId);
    await vector.close();
  });

  it('persistence - format 3 snapshots (chunks in the vector entries, no checksum of item bytes) still load, and are written as format 5 at close', async () => {
    const dataDir = await tempDir();
    const snapshot = join(dataDir, 'vector.snapshot');
    await mkdir(snapshot, { recursive: true });
    const chunk = chunkOf({ kbId: 'kb', docId: 'old', text: 'a format three snapshot' });
    const stored = embedder.embedOne(chunk.text);
    const doc = { tenantId: 't1', kbId: 'kb', docId: 'old', version: 1 };
    const documents = Buffer.from(`${JSON.stringify({ op: 'upsert', doc, items: [{ chunk, vector: [0, 256] }] })}\n`);
    await writeFile(join(snapshot, 'documents.jsonl'), documents);
    await writeFile(join(snapshot, 'items.bin'), Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength));
    await writeFile(join(snapshot, 'hnsw.json'), JSON.stringify({ dimensions: embedder.dimensions, partitions: [] }));
    await writeFile(
      join(snapshot, 'manifest.json'),
      JSON.stringify({ format: 3, documents: 1, itemBytes: 256, checksums: { documents: crc32(documents) } }),
    );

    const search = async (backend: EmbeddedVectorBackend) =>
      (await backend.search({ scope: { tenantId: 't1', kbIds: ['kb'] }, vector: stored, limit: 1 }, never)).map(
        (hit) => hit.chunk,
      );
    const upgraded = await EmbeddedVectorBackend.open({ dimensions: embedder.dimensions, dataDir, durable: false });
    expect(await search(upgraded)).toEqual([chunk]);
    // Nothing was written, yet the close rewrites the snapshot in the current format.
    await upgraded.close();
    const manifest = JSON.parse(await readFile(join(snapshot, 'manifest.json'), 'utf8')) as { format: number };
    expect(manifest.format).toBe(5);
    expect(await readFile(join(snapshot, 'documents.jsonl'), 'utf8')).not.toContain('format three');
    const reopened = await EmbeddedVectorBackend.open({ dimensions: embedder.dimensions, dataDir, durable: false });
    expect(await search(reopened)).toEqual([chunk]);
    await reopened.close();

    // A lexical snapshot whose manifest vouches for no item bytes (format 3) has its chunks validated as read.
    const lexical = await EmbeddedLexicalBackend.open({ dataDir, durable: false });
    await lexical.upsertDocument(doc, [chunk]);
    await lexical.close();
    const lexicalManifest = join(dataDir, 'lexical.snapshot', 'manifest.json');
    const written = JSON.parse(await readFile(lexicalManifest, 'utf8')) as { checksums: { documents: number } };
    await writeFile(
      lexicalManifest,
      JSON.stringify({ ...written, format: 3, checksums: { documents: written.checksums.documents } }),
    );
    const lexicalUpgraded = await EmbeddedLexicalBackend.open({ dataDir, durable: false });
    const lexicalHits = await lexicalUpgraded.search(
      { scope: { tenantId: 't1', kbIds: ['kb'] }, query: 'format three', limit: 1 },
      never,
    );
    expect(lexicalHits.map((hit) => hit.chunk)).toEqual([chunk]);
    await lexicalUpgraded.close();
    expect(JSON.parse(await readFile(lexicalManifest, 'utf8'))).toMatchObject({ format: 5 });
  });
});
