import type { Chunk__Output } from '@hopline/contracts';
import { chunkMergeKey, FoundBy } from '@hopline/contracts';
import { instrument } from '@hopline/telemetry';
import type { HybridRetriever, RetrieveInput, RetrieveResult } from '../hybrid/hybrid-retriever.js';
import { chunkFields } from '../hybrid/hybrid-retriever.js';
import type { EntityGraph } from './entity-graph.js';

export interface SeededRetrieveInput extends RetrieveInput {
  /** Texts whose entities seed the entity graph (the hop's query, the previous hops' answers); none: no walk. */
  seeds?: readonly string[];
}

export interface SeededRetrieveResult extends RetrieveResult {
  timings: RetrieveResult['timings'] & { graphMs: number };
  /** Seeds were given and no graph is kept here: why. */
  noGraphReason?: string;
}

/** Hybrid retrieval that also walks the entity graph from the caller's seeds, where one is kept. */
export interface SeededRetriever {
  retrieve(input: SeededRetrieveInput): Promise<SeededRetrieveResult>;
}

// Reciprocal-rank fusion's damping constant, as the hybrid retriever's default.
const RRF_K = 60;

const keyOf = (chunk: Chunk__Output) => chunkMergeKey(chunk.kbId, chunk.dedupeKey || chunk.chunkId);

/**
 * Reciprocal-rank fusion (k = 60) of the hybrid hits and the graph's, merged by kb id and
 * dedupe key: a chunk both found keeps its hybrid scores and gains the graph's; one only the
 * graph linked is found by ENTITY_GRAPH. Nothing is cut: the caller's reranker chooses among
 * all of them.
 */
function fuseWithGraph(hybrid: readonly Chunk__Output[], linked: readonly Chunk__Output[]): Chunk__Output[] {
  const fused = new Map<string, { chunk: Chunk__Output; score: number }>();
  for (const list of [hybrid, linked]) {
    list.forEach((chunk, index) => {
      const entry = fused.get(keyOf(chunk));
      const score = 1 / (RRF_K + index + 1);
      if (!entry) fused.set(keyOf(chunk), { chunk, score });
      else {
        entry.score += score;
        entry.chunk = { ...entry.chunk, scores: { ...entry.chunk.scores, ...chunk.scores } };
      }
    });
  }
  return [...fused.values()].sort((a, b) => b.score - a.score).map((entry) => entry.chunk);
}

/**
 * The hybrid retriever with the entity graph beside it: the chunks personalized PageRank from the
 * seeds ranks highest (as many as the hits asked for) fused with the BM25 and vector hits by rank.
 * The walk stays in the scope's tenant and knowledge bases and honours its document selection.
 */
export function withEntityGraph(retriever: HybridRetriever, graph: EntityGraph): SeededRetriever {
  return {
    async retrieve(input) {
      const result = await retriever.retrieve(input);
      const seeds = (input.seeds ?? []).filter((seed) => seed.trim() !== '');
      if (seeds.length === 0) return { ...result, timings: { ...result.timings, graphMs: 0 } };
      const started = performance.now();
      const chunks = await instrument(
        'entity graph walk',
        { attributes: { 'hopline.hop': input.hop, 'hopline.graph.seeds': seeds.length } },
        async (span) => {
          const limit = input.topK && input.topK > 0 ? input.topK : result.chunks.length;
          const linked = graph.expand({ scope: input.scope, seeds, limit }).map(({ chunk, score }) => ({
            ...chunkFields(chunk),
            scores: { graph: score },
            foundBy: FoundBy.ENTITY_GRAPH,
            hop: input.hop,
          }));
          span.setAttribute('hopline.retrieval.graph_hits', linked.length);
          return linked.length === 0 ? result.chunks : fuseWithGraph(result.chunks, linked);
        },
      );
      return { ...result, chunks, timings: { ...result.timings, graphMs: performance.now() - started } };
    },
  };
}

/**
 * The hybrid retriever where no entity graph is kept: seeds are answered with the hybrid hits
 * alone and the reason, so a caller that asked for the walk learns it did not happen.
 */
export function withoutEntityGraph(retriever: HybridRetriever, reason: string): SeededRetriever {
  return {
    async retrieve(input) {
      const result = await retriever.retrieve(input);
      const seeded = (input.seeds ?? []).some((seed) => seed.trim() !== '');
      return { ...result, timings: { ...result.timings, graphMs: 0 }, ...(seeded ? { noGraphReason: reason } : {}) };
    },
  };
}
