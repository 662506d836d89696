import type { Chunk__Output, Scores__Output } from '@hopline/contracts';
import { CancelledError, ValidationError, toHoplineError } from '@hopline/contracts';
import { instrument } from '@hopline/telemetry';
import type { Attributes, Span } from '@opentelemetry/api';
import { assertScope } from '../backends/scope.js';
import type { IndexedChunk, LexicalBackend, ScoredChunk, SearchScope, VectorBackend } from '../backends/types.js';
import type { Embedder } from '../vector/embedder.js';
import { normalizeInPlace } from '../vector/embedder.js';
import type { Guard } from './guard.js';
import type { FusedCandidate, FusionMethod, RankedList, SearchPath } from './fusion.js';
import { fuse } from './fusion.js';

export interface HybridRetrieverOptions {
  /** How the two paths' lists become one (default `rrf`; see `FusionMethod`). */
  fusion: FusionMethod;
  /** RRF damping constant (default 60). */
  rrfK: number;
  /** Each path's weight in fusion (defaults 1 and 1). */
  bm25Weight: number;
  vectorWeight: number;
  /** Candidates each path contributes before fusion (defaults 50 and 50). */
  bm25Candidates: number;
  vectorCandidates: number;
  /** Chunks kept after fusion when the request names no top-k (default 30). */
  keep: number;
}

export const DEFAULT_HYBRID_OPTIONS: HybridRetrieverOptions = {
  fusion: 'rrf',
  rrfK: 60,
  bm25Weight: 1,
  vectorWeight: 1,
  bm25Candidates: 50,
  vectorCandidates: 50,
  keep: 30,
};

export interface HybridRetrieverDependencies {
  lexical: LexicalBackend;
  vector: VectorBackend;
  embedder: Embedder;
  /** Protects the BM25 path (its own deadline and breaker). */
  lexicalGuard: Guard;
  /** Protects the vector path, query embedding included. */
  vectorGuard: Guard;
  /** Overrides `hybridOptionsFor(embedder)`. */
  options?: Partial<HybridRetrieverOptions>;
}

/**
 * The options a retriever over `embedder` runs with: the defaults, then the fusion the embedder
 * declares for itself (a weak offline embedder asks for less say than BM25), then `overrides`.
 * Undefined overrides are ignored, so a caller can pass optional settings straight through.
 */
export function hybridOptionsFor(
  embedder: Pick<Embedder, 'fusion'>,
  overrides: Partial<HybridRetrieverOptions> = {},
): HybridRetrieverOptions {
  const declared: Partial<HybridRetrieverOptions> = embedder.fusion
    ? { fusion: embedder.fusion.method, vectorWeight: embedder.fusion.vectorWeight }
    : {};
  const given = Object.fromEntries(Object.entries(overrides).filter(([, value]) => value !== undefined));
  return { ...DEFAULT_HYBRID_OPTIONS, ...declared, ...given };
}

export interface RetrieveInput {
  query: string;
  /** Hypothetical answer text; searched by the vector path only. */
  hydeText?: string;
  /** The caller's verified scope: a hard filter in both paths. */
  scope: SearchScope;
  /** Chunks wanted; 0 or absent keeps the configured default. */
  topK?: number;
  /** The hop this retrieval serves (1-based), stamped on every chunk. */
  hop: number;
  deadlineUnixMs: number;
  signal?: AbortSignal;
}

export interface RetrieveResult {
  chunks: Chunk__Output[];
  /** True when a path did not answer; `degradedReasons` says which and why. */
  degraded: boolean;
  degradedReasons: string[];
  timings: { bm25Ms: number; vectorMs: number; fusionMs: number };
  /**
   * Each path's search as it went, for the worker's per-path metrics: `hits` is 0 for a path
   * that failed, `outcome` is `ok` or the taxonomy code of its failure.
   */
  paths: Array<{ path: SearchPath; ms: number; hits: number; outcome: string }>;
}

export interface HybridRetriever {
  retrieve(input: RetrieveInput): Promise<RetrieveResult>;
}

interface PathOutcome {
  path: SearchPath;
  hits?: ScoredChunk[];
  error?: unknown;
  ms: number;
}

/** Backends that are databases OpenTelemetry names in `db.system`; the embedded indexes are not. */
const DB_SYSTEMS = new Set(['elasticsearch', 'milvus']);

/** What a path's span says of the store it searched and the request it served. */
function searchAttributes(path: SearchPath, backend: string, guard: Guard, input: RetrieveInput): Attributes {
  return {
    ...(DB_SYSTEMS.has(backend) ? { 'db.system': backend, 'db.operation.name': 'search' } : {}),
    'hopline.retrieval.path': path,
    'hopline.retrieval.backend': backend,
    'hopline.tenant_id': input.scope.tenantId,
    'hopline.kb_ids': [...input.scope.kbIds],
    'hopline.hop': input.hop,
    ...(guard.state ? { 'hopline.breaker.state': guard.state } : {}),
  };
}

/**
 * BM25 and vector search in parallel, each through its own guard, fused by `options.fusion`.
 * A path that fails or times out leaves the other to answer alone, and the result says so;
 * when both fail the result is empty, with both reasons, as soon as the second one fails.
 */
export function createHybridRetriever(dependencies: HybridRetrieverDependencies): HybridRetriever {
  const { lexical, vector, embedder, lexicalGuard, vectorGuard } = dependencies;
  const options = hybridOptionsFor(embedder, dependencies.options);

  /**
   * One path's search in a span of its own (`bm25 search`, `vector search`), whose status is
   * ERROR when the path failed; the failure is returned, not thrown, so the other path answers.
   */
  async function timed(
    path: SearchPath,
    attributes: Attributes,
    run: () => Promise<ScoredChunk[]>,
  ): Promise<PathOutcome> {
    const started = performance.now();
    try {
      const hits = await instrument(
        `${path} search`,
        { attributes, acceptableErrors: (error) => error instanceof CancelledError },
        async (span: Span) => {
          const found = await run();
          span.setAttribute('hopline.retrieval.hits', found.length);
          return found;
        },
      );
      return { path, hits, ms: performance.now() - started };
    } catch (error) {
      return { path, error, ms: performance.now() - started };
    }
  }

  async function queryVector(input: RetrieveInput, signal: AbortSignal): Promise<Float32Array> {
    // HyDE: the hypothetical answer reads like the passage sought; the question keeps the
    // search anchored when the guess is wrong, so both are embedded and averaged.
    const texts = input.hydeText ? [input.query, input.hydeText] : [input.query];
    const vectors = await embedder.embed(texts, signal);
    if (vectors.length === 1) return vectors[0] as Float32Array;
    const mean = new Float32Array(embedder.dimensions);
    for (const v of vectors) for (let i = 0; i < mean.length; i++) mean[i] = (mean[i] as number) + (v[i] as number);
    return normalizeInPlace(mean);
  }

  return {
    async retrieve(input: RetrieveInput): Promise<RetrieveResult> {
      assertScope(input.scope);
      if (!input.query.trim()) throw new ValidationError('retrieval query is empty');
      const keep = input.topK && input.topK > 0 ? input.topK : options.keep;
      const guardOptions = { deadlineUnixMs: input.deadlineUnixMs, ...(input.signal ? { signal: input.signal } : {}) };

      const [bm25, vectorOutcome] = await Promise.all([
        timed('bm25', searchAttributes('bm25', lexical.name, lexicalGuard, input), () =>
          lexicalGuard.call(
            (signal) =>
              lexical.search(
                { scope: input.scope, query: input.query, limit: Math.max(options.bm25Candidates, keep) },
                signal,
              ),
            guardOptions,
          ),
        ),
        timed('vector', searchAttributes('vector', vector.name, vectorGuard, input), () =>
          vectorGuard.call(async (signal) => {
            const query = await queryVector(input, signal);
            // A query with nothing the embedder knows (stop words only, to the hashing embedder)
            // embeds as the zero vector: it scores every chunk 0, so its nearest chunks would be
            // any k of them, and relative-score fusion would weigh them as fully as real matches.
            if (query.every((value) => value === 0)) return [];
            return vector.search(
              { scope: input.scope, vector: query, limit: Math.max(options.vectorCandidates, keep) },
              signal,
            );
          }, guardOptions),
        ),
      ]);
      if (input.signal?.aborted) throw new CancelledError('retrieval cancelled by the caller');

      const degradedReasons: string[] = [];
      const lists: RankedList[] = [];
      for (const outcome of [bm25, vectorOutcome]) {
        if (outcome.hits) {
          lists.push({
            path: outcome.path,
            weight: outcome.path === 'bm25' ? options.bm25Weight : options.vectorWeight,
            hits: outcome.hits,
          });
          continue;
        }
        const error = toHoplineError(outcome.error);
        if (error instanceof ValidationError) throw error;
        degradedReasons.push(
          `${outcome.path === 'bm25' ? lexical.name : vector.name} search failed (${error.code}): ${error.message}`,
        );
      }

      const fusionStarted = performance.now();
      const chunks = await instrument(
        'fusion',
        {
          attributes: {
            'hopline.fusion.method': options.fusion,
            'hopline.fusion.paths': lists.map((list) => list.path),
            'hopline.hop': input.hop,
          },
        },
        async (span) => {
          const fused = fuse(lists, { method: options.fusion, k: options.rrfK, keep });
          span.setAttribute('hopline.retrieval.fused', fused.length);
          if (degradedReasons.length > 0) {
            span.setAttributes({ 'hopline.degraded': true, 'hopline.degraded_reasons': degradedReasons });
          }
          return fused.map((candidate) => toChunk(candidate, input.hop));
        },
      );
      return {
        chunks,
        degraded: degradedReasons.length > 0,
        degradedReasons,
        timings: { bm25Ms: bm25.ms, vectorMs: vectorOutcome.ms, fusionMs: performance.now() - fusionStarted },
        paths: [bm25, vectorOutcome].map((outcome) => ({
          path: outcome.path,
          ms: outcome.ms,
          hits: outcome.hits?.length ?? 0,
          outcome: outcome.hits ? 'ok' : toHoplineError(outcome.error).code,
        })),
      };
    },
  };
}

/** The proto value of a fused candidate: each stage's score in its own field (the fused one in `rrf`). */
export function toChunk(candidate: FusedCandidate, hop: number): Chunk__Output {
  const scores: Scores__Output = { rrf: candidate.fused };
  if (candidate.bm25 !== undefined) scores.bm25 = candidate.bm25;
  if (candidate.vector !== undefined) scores.vector = candidate.vector;
  return { ...chunkFields(candidate.chunk), scores, foundBy: candidate.foundBy, hop };
}

/** An indexed chunk as the contract carries it, before any retrieval scored it. */
export function chunkFields(chunk: IndexedChunk): Omit<Chunk__Output, 'scores' | 'foundBy' | 'hop'> {
  return {
    chunkId: chunk.chunkId,
    tenantId: chunk.tenantId,
    kbId: chunk.kbId,
    docId: chunk.docId,
    docVersion: chunk.docVersion,
    title: chunk.title,
    text: chunk.text,
    span: { start: chunk.span.start, end: chunk.span.end },
    dedupeKey: chunk.dedupeKey,
    effectiveDate: chunk.effectiveDate,
    sourceUri: chunk.sourceUri,
  };
}
