import { contentTerms } from '@hopline/text';
import { scopePartitions, selectedDocIds } from '../backends/types.js';
import type { DocumentKey, IndexedChunk, ScoredChunk, SearchScope, VersionedDocumentKey } from '../backends/types.js';
import { assertScope } from '../backends/scope.js';
import { partitionKey } from '../backends/types.js';

/**
 * The entity–chunk graph a hop expands through (HippoRAG's mechanism without its model): every
 * chunk is linked to the entities it names (what `EntityExtractor` reads: named and quoted
 * spans, the names jieba tags in Chinese, its document's title), and a retrieval's seeds (the
 * texts the hop knows: its query, the previous hops' answers) spread over the links by
 * personalized PageRank. A chunk two links from a seed (it shares an entity with a chunk that
 * names the seed) is reachable though it shares no word with the query: a bridge is followed on
 * untitled news as on a wiki.
 *
 * One graph per tenant and knowledge base (the indexes' partition key): a walk never leaves the
 * partitions of the caller's scope, so no tenant's chunks reach another tenant's seeds.
 */

/** The entity keys a chunk names; the same keys for the same name wherever it appears. */
export type EntityExtractor = (title: string, text: string) => string[];

export interface ExpandRequest {
  /** The caller's verified scope: only its tenant's partitions are walked. */
  scope: SearchScope;
  /** Texts whose entities seed the walk. */
  seeds: readonly string[];
  /** Chunks to return, best first. */
  limit: number;
}

export interface EntityGraphSize {
  chunks: number;
  entities: number;
  edges: number;
}

/**
 * A chunk as the graph links it: its entity keys, and the chunk, which the graph reads only when
 * a walk returns it (an index restored from a snapshot may keep it unparsed until then).
 */
export interface LinkedChunk {
  readonly entities: readonly string[];
  readonly chunk: IndexedChunk;
}

export interface EntityGraph {
  /** The entity keys of a chunk: those it carries (stored at indexing), else extracted now. */
  entitiesOf(chunk: IndexedChunk): readonly string[];
  /** The document's chunks at its version, linked to their entities, in place of any it had. */
  putDocument(doc: VersionedDocumentKey, chunks: readonly IndexedChunk[]): void;
  /** `putDocument` for chunks whose entity keys are known already (a restart's). */
  linkDocument(doc: VersionedDocumentKey, chunks: readonly LinkedChunk[]): void;
  removeDocument(doc: DocumentKey): void;
  /** The version of the document the graph links, if it links one. */
  documentVersion(doc: DocumentKey): number | undefined;
  /** The chunks personalized PageRank from the seeds' entities ranks highest, with their mass. */
  expand(request: ExpandRequest): ScoredChunk[];
  /** Chunks linked, entities some chunk names, and the links between them, over every partition. */
  readonly size: EntityGraphSize;
}

// HippoRAG's damping: half the mass restarts at the seeds each step, so the walk stays near them.
const DAMPING = 0.5;
const ITERATIONS = 8;
// An entity named by more chunks than this is a hub ("United States", "2019"): it links
// everything to everything, so the walk does not pass through it.
const HUB_SHARE = 0.01;
const MIN_HUB_DEGREE = 20;
// Mass below this (of the 1 the walk starts with) is not passed on: it could not lift a chunk
// into the first ranks, and on a large partition it would reach most of it.
const NEGLIGIBLE_MASS = 1e-5;
// The longest run of query words looked up as one entity.
const MAX_SEED_WORDS = 5;
const NO_LINKS: readonly number[] = [];

/**
 * One tenant's knowledge base. Chunks and entities are numbered for the walk; a write changes
 * only the links of the chunks it adds or removes (a removed chunk's number, and an entity's no
 * chunk names any more, are taken by the next ones added), so its cost is the size of the
 * document, not of the partition. Whether an entity is a hub is decided as the walk meets it,
 * from the partition's size then.
 */
class PartitionGraph {
  private readonly chunks: (LinkedChunk | undefined)[] = [];
  /** The document of each chunk, so that a scope's document selection needs no chunk read. */
  private readonly chunkDocs: (string | undefined)[] = [];
  private readonly chunkLinks: number[][] = [];
  private readonly freeChunks: number[] = [];
  private readonly entityIndex = new Map<string, number>();
  private readonly entityKeys: string[] = [];
  // Arrays, not sets: a restart links a hundred thousand entities, most named by one chunk, and
  // a set each costs several times the memory and time; a chunk appears once in each list.
  private readonly entityLinks: number[][] = [];
  private readonly freeEntities: number[] = [];
  private readonly documents = new Map<string, { version: number; chunks: number[] }>();
  /** Chunks linked. */
  live = 0;
  /** Entities some chunk names. */
  entities = 0;
  /** Chunk–entity links. */
  edges = 0;

  versionOf(docId: string): number | undefined {
    return this.documents.get(docId)?.version;
  }

  put(doc: VersionedDocumentKey, chunks: readonly LinkedChunk[]): void {
    this.remove(doc.docId);
    const ids: number[] = [];
    for (const linked of chunks) {
      const id = this.freeChunks.pop() ?? this.chunks.length;
      this.chunks[id] = linked;
      this.chunkDocs[id] = doc.docId;
      // A name said twice in a chunk is one link; most chunks name few, so no set is built for them.
      const keys = linked.entities.length > 1 ? new Set(linked.entities) : linked.entities;
      const entities: number[] = [];
      for (const key of keys) entities.push(this.linkedEntity(key, id));
      this.chunkLinks[id] = entities;
      this.edges += entities.length;
      ids.push(id);
    }
    this.documents.set(doc.docId, { version: doc.version, chunks: ids });
    this.live += ids.length;
  }

  remove(docId: string): void {
    const document = this.documents.get(docId);
    if (!document) return;
    for (const id of document.chunks) {
      for (const entity of this.chunkLinks[id] ?? []) this.unlink(entity, id);
      this.edges -= this.chunkLinks[id]?.length ?? 0;
      this.chunkLinks[id] = [];
      this.chunks[id] = undefined;
      this.chunkDocs[id] = undefined;
      this.freeChunks.push(id);
    }
    this.documents.delete(docId);
    this.live -= document.chunks.length;
  }

  /** Chunk mass after the walk from the seeds, summed over its steps; empty when no seed is an entity here. */
  walk(seeds: readonly string[]): { linked: LinkedChunk; docId: string; score: number }[] {
    const hubDegree = Math.max(MIN_HUB_DEGREE, this.live * HUB_SHARE);
    // The chunks an entity links the walk to: none for a hub.
    const entityChunks = (entity: number): readonly number[] => {
      const linked = this.entityLinks[entity] as number[];
      return linked.length <= hubDegree ? linked : NO_LINKS;
    };
    // Restart mass per seed entity by its specificity (HippoRAG's node specificity): a name
    // few chunks share says more about where to look than one many share.
    const restart = new Map<number, number>();
    for (const text of seeds)
      for (const entity of this.seedEntities(text)) {
        const degree = entityChunks(entity).length;
        if (degree > 0) restart.set(entity, 1 / degree);
      }
    const total = [...restart.values()].reduce((sum, weight) => sum + weight, 0);
    if (total === 0) return [];

    // The walk alternates sides: entity mass flows to the chunks naming it, chunk mass to the
    // entities it names, and half of it restarts at the seeds each step. Only the nodes the mass
    // has reached are visited (in id order, so sums do not depend on the order they were
    // reached in), and a node holding negligible mass passes none on: a walk costs what it
    // reaches near its seeds, not the partition's size.
    const restartMass = [...restart].map(([entity, weight]) => [entity, weight / total] as const);
    let entityMass = new Map<number, number>(restartMass);
    let chunkMass = new Map<number, number>();
    const scores = new Map<number, number>();
    const add = (mass: Map<number, number>, node: number, share: number) =>
      mass.set(node, (mass.get(node) ?? 0) + share);
    // The ids alone, sorted as numbers: no [id, mass] pair per node and no comparator call per comparison.
    const ascending = (mass: Map<number, number>) => Uint32Array.from(mass.keys()).sort();
    for (let step = 0; step < ITERATIONS; step += 1) {
      const nextEntities = new Map<number, number>();
      for (const [entity, weight] of restartMass) nextEntities.set(entity, (1 - DAMPING) * weight);
      const nextChunks = new Map<number, number>();
      for (const entity of ascending(entityMass)) {
        const mass = entityMass.get(entity) as number;
        if (mass < NEGLIGIBLE_MASS) continue;
        const linked = entityChunks(entity);
        const share = (DAMPING * mass) / linked.length;
        for (const chunk of linked) add(nextChunks, chunk, share);
      }
      for (const chunk of ascending(chunkMass)) {
        const mass = chunkMass.get(chunk) as number;
        if (mass < NEGLIGIBLE_MASS) continue;
        const linked = (this.chunkLinks[chunk] as number[]).filter((entity) => entityChunks(entity).length > 0);
        if (linked.length === 0) continue;
        const share = (DAMPING * mass) / linked.length;
        for (const entity of linked) add(nextEntities, entity, share);
      }
      entityMass = nextEntities;
      chunkMass = nextChunks;
      for (const chunk of ascending(nextChunks)) add(scores, chunk, nextChunks.get(chunk) as number);
    }
    const reached: { linked: LinkedChunk; docId: string; score: number }[] = [];
    for (const id of ascending(scores)) {
      const score = scores.get(id) as number;
      const linked = this.chunks[id];
      if (score > 0 && linked) reached.push({ linked, docId: this.chunkDocs[id] as string, score });
    }
    return reached;
  }

  /** The entity's number, linked to the chunk; a key no chunk named before takes a free number. */
  private linkedEntity(key: string, chunk: number): number {
    let id = this.entityIndex.get(key);
    if (id === undefined) {
      id = this.freeEntities.pop() ?? this.entityLinks.length;
      this.entityIndex.set(key, id);
      this.entityKeys[id] = key;
      this.entityLinks[id] = [];
    }
    const linked = this.entityLinks[id] as number[];
    if (linked.length === 0) this.entities += 1;
    linked.push(chunk);
    return id;
  }

  /** Unlinks the chunk; an entity left with no chunk is forgotten and its number freed. */
  private unlink(entity: number, chunk: number): void {
    const linked = this.entityLinks[entity] as number[];
    // The last id takes the place of the one removed: the order of a list is not its meaning.
    const at = linked.indexOf(chunk);
    linked[at] = linked[linked.length - 1] as number;
    linked.pop();
    if (linked.length > 0) return;
    this.entities -= 1;
    this.entityIndex.delete(this.entityKeys[entity] as string);
    this.freeEntities.push(entity);
  }

  /** The entities a text names: every run of its words (up to five) that is one's key. */
  private seedEntities(text: string): number[] {
    const terms = contentTerms(text);
    const found = new Set<number>();
    for (let start = 0; start < terms.length; start += 1) {
      // Each run is the one before it and one more word: built on, not joined again from its words.
      let run = terms[start] as string;
      for (let end = start + 1; end <= Math.min(terms.length, start + MAX_SEED_WORDS); end += 1) {
        if (end > start + 1) run += ` ${terms[end - 1] as string}`;
        const id = this.entityIndex.get(run);
        if (id !== undefined) found.add(id);
      }
    }
    return [...found];
  }
}

export function createEntityGraph(extract: EntityExtractor): EntityGraph {
  const partitions = new Map<string, PartitionGraph>();
  const entitiesOf = (chunk: IndexedChunk) => chunk.entities ?? extract(chunk.title, chunk.text);
  const linkDocument = (doc: VersionedDocumentKey, chunks: readonly LinkedChunk[]) => {
    const key = partitionKey(doc.tenantId, doc.kbId);
    let partition = partitions.get(key);
    if (!partition) {
      partition = new PartitionGraph();
      partitions.set(key, partition);
    }
    partition.put(doc, chunks);
  };

  return {
    entitiesOf,
    putDocument(doc, chunks) {
      linkDocument(
        doc,
        chunks.map((chunk) => ({ entities: entitiesOf(chunk), chunk })),
      );
    },
    linkDocument,
    removeDocument(doc) {
      partitions.get(partitionKey(doc.tenantId, doc.kbId))?.remove(doc.docId);
    },
    documentVersion(doc) {
      return partitions.get(partitionKey(doc.tenantId, doc.kbId))?.versionOf(doc.docId);
    },
    expand({ scope, seeds, limit }) {
      assertScope(scope);
      const docIds = selectedDocIds(scope);
      const ranked: { linked: LinkedChunk; score: number }[] = [];
      for (const key of scopePartitions(scope)) {
        for (const hit of partitions.get(key)?.walk(seeds) ?? [])
          if (!docIds || docIds.has(hit.docId)) ranked.push(hit);
      }
      // Only the chunks returned are read.
      return ranked
        .sort((a, b) => b.score - a.score)
        .slice(0, limit)
        .map(({ linked, score }) => ({ chunk: linked.chunk, score }));
    },
    get size() {
      const size = { chunks: 0, entities: 0, edges: 0 };
      for (const partition of partitions.values()) {
        size.chunks += partition.live;
        size.entities += partition.entities;
        size.edges += partition.edges;
      }
      return size;
    },
  };
}
