import type { Chunk__Output } from '@hopline/contracts';
import { FoundBy } from '@hopline/contracts';
import type { EntityGraphPort } from '../loop/ports.js';
import { contentTerms } from '@hopline/text';
import { entityKey, namedSpans } from '../offline/text.js';

/**
 * The entity–chunk graph a hop expands through (HippoRAG's mechanism without its model): every
 * chunk is linked to the entities it names — capitalised and quoted names, the names jieba tags
 * in Chinese, its document's title — and a hop's seeds (the entities its query and the previous
 * hops' answers name) spread over the graph by personalized PageRank. A chunk two links from a
 * seed (it shares an entity with a chunk that names the seed) is reachable though it shares no
 * word with the query: a bridge is followed on untitled news as on a wiki.
 */

/** A chunk as the graph keeps it: what a retrieved chunk carries, without per-query scores. */
export type GraphChunk = Omit<Chunk__Output, 'scores' | 'foundBy' | 'hop'>;

export interface ExpandOptions {
  /** Texts whose entities seed the walk: the hop's query, the previous hops' answers. */
  seeds: readonly string[];
  /** Chunks to return, best first. */
  limit: number;
  /** Only chunks of these knowledge bases. */
  kbIds: readonly string[];
}

export interface EntityGraph {
  /** Links a chunk to the entities it names; a chunk id seen before is replaced. */
  add(chunk: GraphChunk): void;
  /** The chunks personalized PageRank from the seeds' entities ranks highest, with their scores. */
  expand(options: ExpandOptions): { chunk: GraphChunk; score: number }[];
  readonly size: { chunks: number; entities: number };
}

// HippoRAG's damping: half the mass restarts at the seeds each step, so the walk stays near them.
const DAMPING = 0.5;
const ITERATIONS = 8;
// An entity named by more chunks than this is a hub ("United States", "2019"): it links
// everything to everything, so the walk does not pass through it.
const HUB_SHARE = 0.01;
const MIN_HUB_DEGREE = 20;
// The longest run of query words looked up as one entity.
const MAX_SEED_WORDS = 5;

/** The entity keys a chunk names. */
export function chunkEntities(title: string, text: string): string[] {
  const keys = new Set<string>();
  const titleKey = entityKey(title);
  if (titleKey) keys.add(titleKey);
  for (const span of namedSpans(text)) {
    const key = entityKey(span.text);
    if (key) keys.add(key);
  }
  return [...keys];
}

export function createEntityGraph(): EntityGraph {
  const chunks: GraphChunk[] = [];
  const chunkIndex = new Map<string, number>();
  const chunkLinks: number[][] = [];
  const entityIndex = new Map<string, number>();
  const entityLinks: Set<number>[] = [];

  function entityId(key: string): number {
    let id = entityIndex.get(key);
    if (id === undefined) {
      id = entityLinks.length;
      entityIndex.set(key, id);
      entityLinks.push(new Set());
    }
    return id;
  }

  function add(chunk: GraphChunk): void {
    let id = chunkIndex.get(chunk.chunkId);
    if (id === undefined) {
      id = chunks.length;
      chunkIndex.set(chunk.chunkId, id);
    } else {
      for (const entity of chunkLinks[id] ?? []) entityLinks[entity]?.delete(id);
    }
    walkable = undefined;
    chunks[id] = chunk;
    const entities = chunkEntities(chunk.title, chunk.text).map(entityId);
    chunkLinks[id] = entities;
    for (const entity of entities) entityLinks[entity]?.add(id);
  }

  /** The graph's entities a text names: every run of its words (up to five) that is one. */
  function seedEntities(text: string): number[] {
    const terms = contentTerms(text);
    const found = new Set<number>();
    for (let start = 0; start < terms.length; start += 1) {
      for (let end = start + 1; end <= Math.min(terms.length, start + MAX_SEED_WORDS); end += 1) {
        const id = entityIndex.get(terms.slice(start, end).join(' '));
        if (id !== undefined) found.add(id);
      }
    }
    return [...found];
  }

  // The links the walk may take, rebuilt after chunks were added: each chunk's entities that
  // are not hubs, and each such entity's chunks.
  let walkable: { chunkEntities: number[][]; entityChunks: number[][] } | undefined;

  function walkableLinks() {
    if (walkable) return walkable;
    const hubDegree = Math.max(MIN_HUB_DEGREE, chunkIndex.size * HUB_SHARE);
    const entityChunks = entityLinks.map((linked) => (linked.size <= hubDegree ? [...linked] : []));
    walkable = {
      entityChunks,
      chunkEntities: chunkLinks.map((entities) => entities.filter((entity) => (entityChunks[entity]?.length ?? 0) > 0)),
    };
    return walkable;
  }

  function expand({ seeds, limit, kbIds }: ExpandOptions): { chunk: GraphChunk; score: number }[] {
    const links = walkableLinks();
    // Restart mass per seed entity by its specificity (HippoRAG's node specificity): a name
    // few chunks share says more about where to look than one many share.
    const restart = new Map<number, number>();
    for (const text of seeds)
      for (const entity of seedEntities(text)) {
        const degree = links.entityChunks[entity]?.length ?? 0;
        if (degree > 0) restart.set(entity, 1 / degree);
      }
    const total = [...restart.values()].reduce((sum, weight) => sum + weight, 0);
    if (total === 0) return [];

    // The walk alternates sides: entity mass flows to the chunks naming it, chunk mass to the
    // entities it names, and half of it restarts at the seeds each step. A chunk's score is
    // the mass it held, summed over the steps.
    let entityMass = new Float64Array(entityLinks.length);
    let chunkMass = new Float64Array(chunks.length);
    const scores = new Float64Array(chunks.length);
    for (const [entity, weight] of restart) entityMass[entity] = weight / total;
    for (let step = 0; step < ITERATIONS; step += 1) {
      const nextEntities = new Float64Array(entityLinks.length);
      for (const [entity, weight] of restart) nextEntities[entity] = ((1 - DAMPING) * weight) / total;
      const nextChunks = new Float64Array(chunks.length);
      entityMass.forEach((mass, entity) => {
        if (mass === 0) return;
        const linked = links.entityChunks[entity] as number[];
        const share = (DAMPING * mass) / linked.length;
        for (const chunk of linked) nextChunks[chunk] = (nextChunks[chunk] as number) + share;
      });
      chunkMass.forEach((mass, chunk) => {
        const linked = links.chunkEntities[chunk] as number[];
        if (mass === 0 || linked.length === 0) return;
        const share = (DAMPING * mass) / linked.length;
        for (const entity of linked) nextEntities[entity] = (nextEntities[entity] as number) + share;
      });
      entityMass = nextEntities;
      chunkMass = nextChunks;
      nextChunks.forEach((mass, chunk) => (scores[chunk] = (scores[chunk] as number) + mass));
    }
    const wanted = new Set(kbIds);
    const ranked: { chunk: GraphChunk; score: number }[] = [];
    scores.forEach((score, id) => {
      const chunk = chunks[id] as GraphChunk;
      if (score > 0 && (wanted.size === 0 || wanted.has(chunk.kbId))) ranked.push({ chunk, score });
    });
    return ranked.sort((a, b) => b.score - a.score).slice(0, limit);
  }

  return {
    add,
    expand,
    get size() {
      return { chunks: chunkIndex.size, entities: entityIndex.size };
    },
  };
}

/** The loop's graph port over an in-process graph: its chunks stamped with the hop, as retrieval stamps its own. */
export function entityGraphPort(graph: EntityGraph): EntityGraphPort {
  return {
    async expand(input, ctx) {
      return graph
        .expand({ seeds: input.seeds, limit: input.topK, kbIds: ctx.request.scope.kbIds })
        .map(({ chunk }) => ({ ...chunk, scores: null, foundBy: FoundBy.FOUND_BY_UNSPECIFIED, hop: input.hop }));
    },
  };
}
