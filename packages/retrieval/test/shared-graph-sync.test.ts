import { contentTerms } from '@hopline/text';
import { describe, expect, it } from 'vitest';
import {
  createEntityGraph,
  createSharedGraphSync,
  type DocumentChange,
  type DocumentKey,
  type DocumentState,
  type EntityGraph,
  type IndexedChunk,
  type SharedGraphSource,
  type VersionedDocumentKey,
} from '../src/index.js';
import { chunkOf } from './fixtures.js';

// A stand-in extractor (capitalised runs, keyed as seeds are), counting what it reads.
let extractions = 0;
function capitalisedNames(title: string, text: string): string[] {
  extractions += 1;
  return [title, ...(text.match(/\p{Lu}\p{L}+(?:\s+\p{Lu}\p{L}+)*/gu) ?? [])]
    .map((name) => contentTerms(name).join(' '))
    .filter(Boolean);
}

const keyOf = (doc: DocumentKey) => `${doc.tenantId}/${doc.kbId}/${doc.docId}`;

/**
 * A shared index as Elasticsearch holds it for the graph: records stamped by their writer's
 * clock, chunks with their entity keys, and chunks written but not yet searchable (a refresh
 * behind their record). Pages of two records, so every read pages.
 */
class SharedIndex implements SharedGraphSource {
  readonly name = 'shared';
  private readonly records = new Map<string, DocumentChange & { changedAtMs: number }>();
  private readonly chunks = new Map<string, { chunk: IndexedChunk; searchable: boolean }>();
  /** The documents each readChunks call asked for. */
  readonly reads: string[][] = [];

  /** A worker's write: the chunks with their entity keys, then the record. */
  write(
    doc: VersionedDocumentKey,
    texts: string[] | null,
    options: { changedAtMs?: number; searchable?: boolean } = {},
  ): IndexedChunk[] {
    for (const [id, stored] of this.chunks) if (stored.chunk.docId === doc.docId) this.chunks.delete(id);
    const written = (texts ?? []).map((text, n) => {
      const chunk = chunkOf({ docId: doc.docId, chunkId: `${doc.docId}#${n}`, docVersion: doc.version, text });
      return { ...chunk, entities: capitalisedNames(chunk.title, chunk.text) };
    });
    for (const chunk of written) this.chunks.set(chunk.chunkId, { chunk, searchable: options.searchable ?? true });
    this.records.set(keyOf(doc), {
      doc,
      deleted: texts === null,
      chunks: written.length,
      changedAtMs: options.changedAtMs ?? Date.now(),
    });
    return written;
  }

  refresh(): void {
    for (const stored of this.chunks.values()) stored.searchable = true;
  }

  async *documentChanges(sinceMs: number | undefined): AsyncGenerator<DocumentChange[]> {
    const changed = [...this.records.values()]
      .filter((record) => sinceMs === undefined || record.changedAtMs >= sinceMs)
      .map(({ doc, deleted, chunks }) => ({ doc, deleted, chunks }));
    for (let start = 0; start < changed.length; start += 2) yield changed.slice(start, start + 2);
  }

  async readChunks(docs: readonly VersionedDocumentKey[]): Promise<IndexedChunk[]> {
    this.reads.push(docs.map((doc) => doc.docId));
    const wanted = new Set(docs.map((doc) => `${keyOf(doc)}@${doc.version}`));
    return [...this.chunks.values()]
      .filter(({ chunk, searchable }) => searchable && wanted.has(`${keyOf(chunk)}@${chunk.docVersion}`))
      .map(({ chunk }) => chunk);
  }

  async documentStates(keys: readonly DocumentKey[]): Promise<Array<DocumentState | undefined>> {
    return keys.map((key) => {
      const record = this.records.get(keyOf(key));
      return record && { version: record.doc.version, deleted: record.deleted, chunks: record.chunks };
    });
  }
}

const doc = (docId: string, version = 1): VersionedDocumentKey => ({ tenantId: 't1', kbId: 'kb1', docId, version });
const scope = { tenantId: 't1', kbIds: ['kb1'] };
const walked = (graph: EntityGraph, seeds: string[]) =>
  graph.expand({ scope, seeds, limit: 10 }).map(({ chunk }) => `${chunk.docId}@${chunk.docVersion}`);

/** One worker's own write: to the shared index and, as `graphIndexedLexical` does, to its graph. */
function writeHere(index: SharedIndex, graph: EntityGraph, key: VersionedDocumentKey, texts: string[] | null) {
  const written = index.write(key, texts);
  if (texts === null) graph.removeDocument(key);
  else graph.putDocument(key, written);
}

describe('entity graph over a shared index', () => {
  it('shared graph - a starting worker links every live document as stored, without reading any text, and walks as the writer does', async () => {
    const index = new SharedIndex();
    const writer = createEntityGraph(capitalisedNames);
    writeHere(index, writer, doc('collab'), ['Ada Lovelace wrote the first program with Charles Babbage.']);
    writeHere(index, writer, doc('born'), ['Charles Babbage came into the world in Walworth.', 'He grew up there.']);
    writeHere(index, writer, doc('walworth'), ['Walworth lies south of the Thames.']);
    writeHere(index, writer, doc('gone'), ['Ada Lovelace kept notes.']);
    writeHere(index, writer, doc('gone', 2), null);

    extractions = 0;
    const starting = createEntityGraph(capitalisedNames);
    expect(await createSharedGraphSync(starting, index).sync()).toEqual({ applied: 3, waiting: 0 });
    expect(extractions).toBe(0);
    expect(starting.size).toEqual(writer.size);
    const seeds = ['Where was the partner of Ada Lovelace born?'];
    expect(walked(starting, seeds)).toEqual(walked(writer, seeds));
    expect(walked(starting, seeds)).toEqual(['collab@1', 'born@1', 'walworth@1']);
  });

  it("shared graph - another worker's new version and delete reach this graph at the next sync, which reads only those documents", async () => {
    const index = new SharedIndex();
    const other = createEntityGraph(capitalisedNames);
    writeHere(index, other, doc('born'), ['Charles Babbage came into the world in Walworth.']);
    writeHere(index, other, doc('collab'), ['Ada Lovelace wrote the first program with Charles Babbage.']);
    const here = createEntityGraph(capitalisedNames);
    const { sync } = createSharedGraphSync(here, index);
    await sync();
    // Nothing written since: nothing read again.
    index.reads.length = 0;
    expect(await sync()).toEqual({ applied: 0, waiting: 0 });
    expect(index.reads).toEqual([]);

    writeHere(index, other, doc('born', 2), ['Charles Babbage lived in Marylebone.']);
    writeHere(index, other, doc('collab', 2), null);
    expect(walked(here, ['Marylebone'])).toEqual([]);
    expect(await sync()).toEqual({ applied: 2, waiting: 0 });
    expect(index.reads).toEqual([['born']]);
    expect(walked(here, ['Marylebone'])).toEqual(['born@2']);
    expect(walked(here, ['Ada Lovelace'])).toEqual([]);
    expect(here.size).toEqual(other.size);
  });

  it("shared graph - a record older than what this worker's own write linked changes nothing", async () => {
    const index = new SharedIndex();
    const here = createEntityGraph(capitalisedNames);
    const { sync } = createSharedGraphSync(here, index);
    await sync();
    // This worker applied version 2 (its graph links it at once); the records the sync reads
    // still say version 1, then a delete at 1.
    const newer = index.write(doc('born', 2), ['Charles Babbage lived in Marylebone.']);
    here.putDocument(doc('born', 2), newer);
    index.write(doc('born', 1), ['Charles Babbage came into the world in Walworth.']);
    await sync();
    index.write(doc('born', 1), null);
    await sync();
    expect(walked(here, ['Marylebone'])).toEqual(['born@2']);
    expect(walked(here, ['Walworth'])).toEqual([]);
  });

  it('shared graph - a record whose chunks are not all searchable yet is linked by a later sync, at the version current then', async () => {
    const index = new SharedIndex();
    const here = createEntityGraph(capitalisedNames);
    const { sync } = createSharedGraphSync(here, index);
    await sync();
    index.write(doc('born'), ['Charles Babbage came into the world in Walworth.', 'Walworth is in Surrey.'], {
      searchable: false,
    });
    expect(await sync()).toEqual({ applied: 0, waiting: 1 });
    expect(walked(here, ['Walworth'])).toEqual([]);
    index.refresh();
    expect(await sync()).toEqual({ applied: 1, waiting: 0 });
    expect(walked(here, ['Walworth'])).toEqual(['born@1', 'born@1']);

    // Superseded while waiting: the delete that replaced it wins.
    index.write(doc('late'), ['Grace Hopper wrote a compiler.'], { searchable: false });
    expect(await sync()).toEqual({ applied: 0, waiting: 1 });
    index.write(doc('late', 2), null);
    await sync();
    index.refresh();
    expect(await sync()).toEqual({ applied: 0, waiting: 0 });
    expect(walked(here, ['Grace Hopper'])).toEqual([]);
  });

  it("shared graph - a record stamped by a writer's clock behind this worker's, within the overlap, is still found", async () => {
    const index = new SharedIndex();
    const here = createEntityGraph(capitalisedNames);
    const { sync } = createSharedGraphSync(here, index, { overlapMs: 10_000 });
    await sync();
    index.write(doc('slow'), ['Grace Hopper wrote a compiler.'], { changedAtMs: Date.now() - 5_000 });
    index.write(doc('too-slow'), ['Alan Turing broke a cipher.'], { changedAtMs: Date.now() - 60_000 });
    await sync();
    expect(walked(here, ['Grace Hopper'])).toEqual(['slow@1']);
    // Past the overlap a record is found only by a start's full read.
    expect(walked(here, ['Alan Turing'])).toEqual([]);
    const restarted = createEntityGraph(capitalisedNames);
    await createSharedGraphSync(restarted, index).sync();
    expect(walked(restarted, ['Alan Turing'])).toEqual(['too-slow@1']);
  });
});
