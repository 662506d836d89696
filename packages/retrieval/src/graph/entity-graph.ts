import { contentTerms } from '@hopline/text';
import { scopePartitions, selectedDocIds } from '../backends/types.js';
import type { DocumentKey, IndexedChunk, ScoredChunk, SearchScope } from '../backends/types.js';
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

export interface EntityGraph {
  /** The entity keys of a chunk: those it carries (stored at indexing), else extracted now. */
  entitiesOf(chunk: IndexedChunk): readonly string[];
  /** The document's chunks, linked to their entities, in place of any it had. */
  putDocument(doc: DocumentKey, chunks: readonly IndexedChunk[]): void;
  removeDocument(doc: DocumentKey): void;
  /** The chunks personalized PageRank from the seeds' entities ranks highest, with their mass. */
  expand(request: ExpandRequest): ScoredChunk[];
  /** Chunks linked, and entities some chunk names, over every partition. */
  readonly size: { chunks: number; entities: number };
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

/**
 * One tenant's knowledge base. Chunks and entities are numbered for the walk's arrays; a removed
 * chunk leaves its number empty (a restart, which reloads the graph, compacts them), and an
 * entity no chunk names any more links nothing.
 */
class PartitionGraph {
  private readonly chunks: (IndexedChunk | undefined)[] = [];
  private readonly chunkLinks: number[][] = [];
  private readonly entityIndex = new Map<string, number>();
  private readonly entityLinks: Set<number>[] = [];
  private readonly documentChunks = new Map<string, number[]>();
  // The links the walk may take, rebuilt after a change: each chunk's entities that are not
  // hubs, and each such entity's chunks.
  private walkable: { chunkEntities: number[][]; entityChunks: number[][] } | undefined;
  live = 0;

  /** Entities some chunk names. */
  get entities(): number {
    return this.entityLinks.filter((linked) => linked.size > 0).length;
  }

  put(docId: string, chunks: readonly IndexedChunk[], entitiesOf: (chunk: IndexedChunk) => readonly string[]): void {
    this.remove(docId);
    const ids: number[] = [];
    for (const chunk of chunks) {
      const id = this.chunks.length;
      this.chunks.push(chunk);
      const entities = [...new Set(entitiesOf(chunk))].map((key) => this.entityId(key));
      this.chunkLinks.push(entities);
      for (const entity of entities) this.entityLinks[entity]?.add(id);
      ids.push(id);
    }
    this.documentChunks.set(docId, ids);
    this.live += ids.length;
    this.walkable = undefined;
  }

  remove(docId: string): void {
    const ids = this.documentChunks.get(docId);
    if (!ids) return;
    for (const id of ids) {
      for (const entity of this.chunkLinks[id] ?? []) this.entityLinks[entity]?.delete(id);
      this.chunkLinks[id] = [];
      this.chunks[id] = undefined;
    }
    this.documentChunks.delete(docId);
    this.live -= ids.length;
    this.walkable = undefined;
  }

  /** Chunk mass after the walk from the seeds, summed over its steps; empty when no seed is an entity here. */
  walk(seeds: readonly string[]): { chunk: IndexedChunk; score: number }[] {
    const links = this.walkableLinks();
    // Restart mass per seed entity by its specificity (HippoRAG's node specificity): a name
    // few chunks share says more about where to look than one many share.
    const restart = new Map<number, number>();
    for (const text of seeds)
      for (const entity of this.seedEntities(text)) {
        const degree = links.entityChunks[entity]?.length ?? 0;
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
    const ascending = (mass: Map<number, number>) => [...mass].sort((a, b) => a[0] - b[0]);
    for (let step = 0; step < ITERATIONS; step += 1) {
      const nextEntities = new Map<number, number>();
      for (const [entity, weight] of restartMass) nextEntities.set(entity, (1 - DAMPING) * weight);
      const nextChunks = new Map<number, number>();
      for (const [entity, mass] of ascending(entityMass)) {
        if (mass < NEGLIGIBLE_MASS) continue;
        const linked = links.entityChunks[entity] as number[];
        const share = (DAMPING * mass) / linked.length;
        for (const chunk of linked) add(nextChunks, chunk, share);
      }
      for (const [chunk, mass] of ascending(chunkMass)) {
        const linked = links.chunkEntities[chunk] as number[];
        if (mass < NEGLIGIBLE_MASS || linked.length === 0) continue;
        const share = (DAMPING * mass) / linked.length;
        for (const entity of linked) add(nextEntities, entity, share);
      }
      entityMass = nextEntities;
      chunkMass = nextChunks;
      for (const [chunk, mass] of ascending(nextChunks)) add(scores, chunk, mass);
    }
    const reached: { chunk: IndexedChunk; score: number }[] = [];
    for (const [id, score] of ascending(scores)) {
      const chunk = this.chunks[id];
      if (score > 0 && chunk) reached.push({ chunk, score });
    }
    return reached;
  }

  private entityId(key: string): number {
    let id = this.entityIndex.get(key);
    if (id === undefined) {
      id = this.entityLinks.length;
      this.entityIndex.set(key, id);
      this.entityLinks.push(new Set());
    }
    return id;
  }

  /** The entities a text names: every run of its words (up to five) that is one's key. */
  private seedEntities(text: string): number[] {
    const terms = contentTerms(text);
    const found = new Set<number>();
    for (let start = 0; start < terms.length; start += 1) {
      for (let end = start + 1; end <= Math.min(terms.length, start + MAX_SEED_WORDS); end += 1) {
        const id = this.entityIndex.get(terms.slice(start, end).join(' '));
        if (id !== undefined) found.add(id);
      }
    }
    return [...found];
  }

  private walkableLinks() {
    if (this.walkable) return this.walkable;
    const hubDegree = Math.max(MIN_HUB_DEGREE, this.live * HUB_SHARE);
    const entityChunks = this.entityLinks.map((linked) => (linked.size <= hubDegree ? [...linked] : []));
    this.walkable = {
      entityChunks,
      chunkEntities: this.chunkLinks.map((entities) =>
        entities.filter((entity) => (entityChunks[entity]?.length ?? 0) > 0),
      ),
    };
    return this.walkable;
  }
}

export function createEntityGraph(extract: EntityExtractor): EntityGraph {
  const partitions = new Map<string, PartitionGraph>();
  const entitiesOf = (chunk: IndexedChunk) => chunk.entities ?? extract(chunk.title, chunk.text);

  return {
    entitiesOf,
    putDocument(doc, chunks) {
      const key = partitionKey(doc.tenantId, doc.kbId);
      let partition = partitions.get(key);
      if (!partition) {
        partition = new PartitionGraph();
        partitions.set(key, partition);
      }
      partition.put(doc.docId, chunks, entitiesOf);
    },
    removeDocument(doc) {
      partitions.get(partitionKey(doc.tenantId, doc.kbId))?.remove(doc.docId);
    },
    expand({ scope, seeds, limit }) {
      assertScope(scope);
      const docIds = selectedDocIds(scope);
      const ranked: ScoredChunk[] = [];
      for (const key of scopePartitions(scope)) {
        for (const hit of partitions.get(key)?.walk(seeds) ?? [])
          if (!docIds || docIds.has(hit.chunk.docId)) ranked.push(hit);
      }
      return ranked.sort((a, b) => b.score - a.score).slice(0, limit);
    },
    get size() {
      let chunks = 0;
      let entities = 0;
      for (const partition of partitions.values()) {
        chunks += partition.live;
        entities += partition.entities;
      }
      return { chunks, entities };
    },
  };
}
