import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IngestCommand__Output } from '@hopline/contracts';
import { contentTerms } from '@hopline/text';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createDeadlineGuard,
  createEntityGraph,
  createHybridRetriever,
  createIndexer,
  EmbeddedLexicalBackend,
  EmbeddedVectorBackend,
  graphIndexedLexical,
  HashingEmbedder,
  loadEntityGraph,
  withEntityGraph,
  withoutEntityGraph,
  chunkFields,
  type EntityGraph,
  type HybridRetriever,
  type LexicalBackend,
  type SearchScope,
} from '../src/index.js';
import { chunkOf } from './fixtures.js';

// The graph's own mechanics, with a stand-in extractor (capitalised runs, keyed by their content
// terms as seeds are); the services extract with the name reader of @hopline/text (chunkEntities).
let extractions = 0;
function capitalisedNames(title: string, text: string): string[] {
  extractions += 1;
  const names = [title, ...(text.match(/\p{Lu}\p{L}+(?:\s+\p{Lu}\p{L}+)*/gu) ?? [])];
  return names.map((name) => contentTerms(name).join(' ')).filter(Boolean);
}

const embedder = new HashingEmbedder({ dimensions: 64 });

// Untitled documents: the only way from the question to the birthplace is the name two of them share.
const CORPUS: Record<string, string> = {
  collab: 'Ada Lovelace wrote the first program with Charles Babbage in 1843.',
  born: 'Charles Babbage came into the world in Walworth, Surrey.',
  walworth: 'Walworth lies south of the Thames.',
  other: 'Grace Hopper wrote the first compiler.',
};

const upsert = (tenantId: string, kbId: string, docId: string, text: string, version = 1): IngestCommand__Output => ({
  op: 'upsert',
  upsert: { tenantId, kbId, docId, version, title: '', text, effectiveDate: '', sourceUri: '', metadata: {} },
});
const remove = (tenantId: string, kbId: string, docId: string, version: number): IngestCommand__Output => ({
  op: 'delete',
  delete: { tenantId, kbId, docId, version },
});
const corpus = (tenantId = 't1', kbId = 'kb1') =>
  Object.entries(CORPUS).map(([docId, text]) => upsert(tenantId, kbId, docId, text));

const scope = (tenantId = 't1', kbIds = ['kb1'], docIds: string[] = []): SearchScope => ({ tenantId, kbIds, docIds });

async function indexed(commands: IngestCommand__Output[], dataDir?: string) {
  const lexical = await EmbeddedLexicalBackend.open({ ...(dataDir ? { dataDir } : {}), durable: false });
  const vector = await EmbeddedVectorBackend.open({ dimensions: embedder.dimensions, durable: false });
  const graph = createEntityGraph(capitalisedNames);
  const indexer = createIndexer({ lexical: graphIndexedLexical(lexical, graph), vector, embedder });
  for (const command of commands) await indexer.apply(command);
  return { lexical, vector, graph, indexer };
}

const docsOf = (graph: EntityGraph, seeds: string[], within = scope(), limit = 10) =>
  graph.expand({ scope: within, seeds, limit }).map(({ chunk }) => chunk.docId);

const closing: Array<{ close(): Promise<void> }> = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(closing.splice(0).map((backend) => backend.close()));
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function opened(commands: IngestCommand__Output[], dataDir?: string) {
  const stack = await indexed(commands, dataDir);
  closing.push(stack.lexical, stack.vector);
  return stack;
}

describe('entity graph', () => {
  it('graph - personalized PageRank reaches a chunk through a shared name, nearer chunks first', async () => {
    const { graph } = await opened(corpus());
    expect(docsOf(graph, ['Where was the partner of Ada Lovelace born?'])).toEqual(['collab', 'born', 'walworth']);
  });

  it('graph - a seed that names no entity of the graph expands to nothing', async () => {
    const { graph } = await opened(corpus());
    expect(docsOf(graph, ['who wrote the first compiler?'])).toEqual([]);
  });

  it('graph - a name most chunks share is a hub the walk does not pass through', async () => {
    const many = Array.from({ length: 30 }, (_, index) =>
      upsert('t1', 'kb1', `news-${index}`, `Northwind Labs reported item ${index} to Carol Vance.`),
    );
    const { graph } = await opened([...many, upsert('t1', 'kb1', 'target', 'Carol Vance founded Harbor Analytics.')]);
    // "Carol Vance" names 31 chunks: more than the hub limit, so it seeds nothing.
    expect(docsOf(graph, ['Carol Vance'])).toEqual([]);
    expect(docsOf(graph, ['Harbor Analytics'])).toEqual(['target']);
  });

  it('graph - an ingested new version relinks its document, a delete unlinks it, a stale write changes nothing', async () => {
    const { graph, indexer } = await opened(corpus());
    await indexer.apply(upsert('t1', 'kb1', 'born', 'Charles Babbage lived in Marylebone.', 2));
    expect(docsOf(graph, ['Walworth'])).toEqual(['walworth']);
    expect(docsOf(graph, ['Marylebone'])).toContain('born');
    // Version 1 again (a redelivery from before the replacement): stale, the graph keeps version 2.
    await indexer.apply(upsert('t1', 'kb1', 'born', CORPUS.born as string, 1));
    expect(docsOf(graph, ['Walworth'])).toEqual(['walworth']);
    await indexer.apply(remove('t1', 'kb1', 'collab', 1));
    expect(docsOf(graph, ['Ada Lovelace'])).toEqual([]);
    expect(graph.size.chunks).toBe(3);
  });

  it('graph - a graph changed write by write walks as one built from its final documents', () => {
    // A seeded generator: documents naming a few of 40 names, rewritten and deleted at random,
    // some names shared by more chunks than the hub limit at times and fewer at others.
    let state = 7;
    const next = (below: number) => {
      state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
      return state % below;
    };
    const names = Array.from({ length: 40 }, (_, index) => `Name${String.fromCharCode(65 + (index % 26))}x${index}`);
    const document = (docId: string, version: number) =>
      Array.from({ length: 1 + next(3) }, (_, index) =>
        chunkOf({
          docId,
          chunkId: `${docId}#${index}`,
          docVersion: version,
          text: Array.from({ length: 1 + next(4) }, () => names[next(names.length) < 8 ? next(4) : next(40)]).join(
            ' met ',
          ),
        }),
      );
    const incremental = createEntityGraph(capitalisedNames);
    const current = new Map<string, { version: number; chunks: ReturnType<typeof document> }>();
    const seeds = names.filter((_, index) => index % 3 === 0).map((name) => [name]);
    for (let write = 1; write <= 400; write += 1) {
      const docId = `doc-${next(60)}`;
      if (next(5) === 0) {
        incremental.removeDocument({ tenantId: 't1', kbId: 'kb1', docId });
        current.delete(docId);
      } else {
        const chunks = document(docId, write);
        incremental.putDocument({ tenantId: 't1', kbId: 'kb1', docId, version: write }, chunks);
        current.set(docId, { version: write, chunks });
      }
      if (write % 50 !== 0) continue;
      const rebuilt = createEntityGraph(capitalisedNames);
      for (const [docId, { version, chunks }] of current)
        rebuilt.putDocument({ tenantId: 't1', kbId: 'kb1', docId, version }, chunks);
      expect(incremental.size).toEqual(rebuilt.size);
      for (const seed of seeds) {
        const walked = (graph: EntityGraph) =>
          graph
            .expand({ scope: scope(), seeds: seed, limit: 1_000 })
            .map(({ chunk, score }) => ({ chunk: chunk.chunkId, version: chunk.docVersion, score }))
            .sort((a, b) => a.chunk.localeCompare(b.chunk));
        const expected = walked(rebuilt);
        const actual = walked(incremental);
        expect(actual.map(({ chunk, version }) => [chunk, version])).toEqual(
          expected.map(({ chunk, version }) => [chunk, version]),
        );
        actual.forEach(({ score }, at) => expect(score).toBeCloseTo(expected[at]?.score as number, 12));
      }
    }
    expect(incremental.size.chunks).toBeGreaterThan(0);
  });

  it("graph - one tenant's seeds never reach another tenant's chunks, even under the same kb id and names", async () => {
    const { graph } = await opened([
      ...corpus('t1', 'kb1'),
      upsert('t2', 'kb1', 'secret', 'Ada Lovelace met Charles Babbage at the Secret Society.'),
    ]);
    const seeds = ['Ada Lovelace', 'Charles Babbage', 'Secret Society'];
    expect(docsOf(graph, seeds, scope('t1'))).not.toContain('secret');
    expect(docsOf(graph, seeds, scope('t2'))).toEqual(['secret']);
    // Another kb of the same tenant is walked only when the scope names it.
    expect(docsOf(graph, seeds, scope('t1', ['kb2']))).toEqual([]);
    expect(() => graph.expand({ scope: scope('', ['kb1']), seeds, limit: 5 })).toThrow(/no tenant/);
  });

  it("graph - a scope's document selection is honoured", async () => {
    const { graph } = await opened(corpus());
    expect(docsOf(graph, ['Ada Lovelace'], scope('t1', ['kb1'], ['born']))).toEqual(['born']);
  });

  it('graph - the entity keys live in the index snapshot: a restart relinks them without extracting again', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'hopline-graph-'));
    dirs.push(dataDir);
    const before = await indexed([...corpus(), remove('t1', 'kb1', 'other', 1)], dataDir);
    const seeds = ['Where was the partner of Ada Lovelace born?'];
    const ranked = before.graph.expand({ scope: scope(), seeds, limit: 10 });
    await Promise.all([before.lexical.close(), before.vector.close()]);

    const lexical = await EmbeddedLexicalBackend.open({ dataDir, durable: false });
    closing.push(lexical);
    extractions = 0;
    const restarted = createEntityGraph(capitalisedNames);
    await loadEntityGraph(restarted, lexical);
    expect(extractions).toBe(0);
    expect(restarted.size).toEqual(before.graph.size);
    expect(restarted.expand({ scope: scope(), seeds, limit: 10 })).toEqual(ranked);
  });

  it('graph - chunks written before the graph existed have their entities extracted at load', async () => {
    const lexical = await EmbeddedLexicalBackend.open({ durable: false });
    closing.push(lexical);
    const vector = await EmbeddedVectorBackend.open({ dimensions: embedder.dimensions, durable: false });
    closing.push(vector);
    const indexer = createIndexer({ lexical, vector, embedder });
    for (const command of corpus()) await indexer.apply(command);
    const graph = createEntityGraph(capitalisedNames);
    await loadEntityGraph(graph, lexical);
    expect(docsOf(graph, ['Walworth'])).toEqual(expect.arrayContaining(['born', 'walworth']));
    expect(docsOf(graph, ['Walworth'])).not.toContain('other');
  });

  it('graph - an index that cannot list its documents cannot load a graph, and says so', async () => {
    const { lexical } = await opened([]);
    const { readDocuments: _unlisted, ...remote } = lexical as LexicalBackend;
    const unlisted: LexicalBackend = { ...remote, name: 'elasticsearch', countChunks: () => lexical.countChunks() };
    await expect(loadEntityGraph(createEntityGraph(capitalisedNames), unlisted)).rejects.toThrow(
      /elasticsearch index cannot list its documents/,
    );
  });
});

describe('retrieval with the entity graph', () => {
  const guard = createDeadlineGuard();
  const request = (seeds: string[]) => ({
    query: 'partner of Ada Lovelace',
    scope: scope(),
    topK: 2,
    hop: 2,
    seeds,
    deadlineUnixMs: Date.now() + 5_000,
  });

  it('graph - seeds add the chunks the graph links, fused by rank with the hybrid hits and marked as found by it', async () => {
    const { lexical, vector, graph } = await opened(corpus());
    const hybrid = createHybridRetriever({ lexical, vector, embedder, lexicalGuard: guard, vectorGuard: guard });
    const plain = await hybrid.retrieve(request([]));
    expect(plain.chunks.map((chunk) => chunk.docId)).not.toContain('born');

    const seeded = await withEntityGraph(hybrid, graph).retrieve(request(['Ada Lovelace']));
    const born = seeded.chunks.find((chunk) => chunk.docId === 'born');
    expect(born).toMatchObject({ foundBy: 'ENTITY_GRAPH', hop: 2 });
    expect(born?.scores?.graph).toBeGreaterThan(0);
    // Found by both: the hybrid hit keeps its scores and gains the graph's, once.
    const collab = seeded.chunks.filter((chunk) => chunk.docId === 'collab');
    expect(collab).toHaveLength(1);
    expect(collab[0]?.scores).toMatchObject({ bm25: expect.any(Number), graph: expect.any(Number) });

    const unseeded = await withEntityGraph(hybrid, graph).retrieve(request([]));
    expect(unseeded.chunks).toEqual(plain.chunks);
  });

  it('graph - chunks of two knowledge bases that share a chunk id are fused as two', async () => {
    // hr/handbook.md and it/handbook.md, ingested into their own knowledge bases: both `handbook#0`.
    const hrHandbook = chunkOf({ docId: 'handbook', kbId: 'hr', text: 'Ada Lovelace runs the payroll team.' });
    const itHandbook = chunkOf({ docId: 'handbook', kbId: 'it', text: 'Reset a forgotten password at the desk.' });
    const graph = createEntityGraph(capitalisedNames);
    for (const chunk of [hrHandbook, itHandbook])
      graph.putDocument({ tenantId: 't1', kbId: chunk.kbId, docId: 'handbook', version: 1 }, [chunk]);
    // The hybrid hits name only the IT handbook; the graph links only the HR one.
    const hybrid: HybridRetriever = {
      retrieve: (input) =>
        Promise.resolve({
          chunks: [{ ...chunkFields(itHandbook), scores: { bm25: 2 }, foundBy: 'BM25', hop: input.hop }],
          degraded: false,
          degradedReasons: [],
          timings: { bm25Ms: 0, vectorMs: 0, fusionMs: 0 },
          paths: [],
        }),
    };
    const { chunks } = await withEntityGraph(hybrid, graph).retrieve({
      ...request(['Ada Lovelace']),
      scope: scope('t1', ['hr', 'it']),
    });
    expect(chunks.map(({ kbId, foundBy, scores }) => ({ kbId, foundBy, scores }))).toEqual([
      { kbId: 'it', foundBy: 'BM25', scores: { bm25: 2 } },
      { kbId: 'hr', foundBy: 'ENTITY_GRAPH', scores: { graph: expect.any(Number) } },
    ]);
  });

  it('graph - without a graph, seeds are answered by the hybrid hits alone with the reason', async () => {
    const { lexical, vector } = await opened(corpus());
    const hybrid = createHybridRetriever({ lexical, vector, embedder, lexicalGuard: guard, vectorGuard: guard });
    const retriever = withoutEntityGraph(hybrid, 'no graph here');
    const seeded = await retriever.retrieve(request(['Ada Lovelace']));
    expect(seeded.noGraphReason).toBe('no graph here');
    expect(seeded.chunks.map((chunk) => chunk.docId)).not.toContain('born');
    expect((await retriever.retrieve(request([]))).noGraphReason).toBeUndefined();
  });
});
