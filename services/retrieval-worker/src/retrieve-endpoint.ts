import type { Endpoint } from '@hopline/bus';
import {
  RETRIEVE_HYDE_MAX_CHARS,
  RETRIEVE_MAX_SEEDS,
  RETRIEVE_QUERY_MAX_CHARS,
  ValidationError,
  clipToChars,
  codecs,
  longerThanChars,
  requireRequestContext,
  type Chunk__Output,
  type RetrieveRequest__Output,
  type RetrieveResponse,
  type ValidRequestContext,
} from '@hopline/contracts';
import type { SeededRetriever } from '@hopline/retrieval';
import type { HoplineMetrics } from '@hopline/telemetry';
import { trace } from '@opentelemetry/api';

export interface RetrieveEndpointDeps {
  retriever: SeededRetriever;
  workerId: string;
  metrics: Pick<
    HoplineMetrics,
    | 'degradedRetrievals'
    | 'retrievalPathDuration'
    | 'retrievalPathHits'
    | 'retrievalFusedSize'
    | 'entityGraphWalkDuration'
    | 'seededRetrievals'
  >;
  /** Endpoint name and subject: the queue group's, or this worker's own. */
  name: string;
  subject: string;
  /** Whether ingest commands stored for these kbs are not applied to the index yet, as of now. */
  changesWaiting: (tenantId: string, kbIds: readonly string[]) => Promise<boolean>;
}

/** A retrieve request whose context is already verified: what the endpoint makes of a decoded one. */
export type VerifiedRetrieveRequest = Omit<RetrieveRequest__Output, 'ctx'> & { ctx: ValidRequestContext };

/** A retrieval's answer before it is encoded: the chunks as the contract carries them. */
export type Retrieved = Omit<RetrieveResponse, 'chunks'> & {
  chunks: Chunk__Output[];
  degraded: boolean;
  degradedReasons: string[];
  noGraphReason: string;
};

/**
 * One retrieval, as the retrieve endpoint answers it. The scope comes from the verified request
 * context and nothing else in the request can widen it: the retriever applies it as a hard
 * filter. Nothing found while the index still has ingest commands of the scope's kbs to apply is
 * flagged degraded, never a plain "nothing found": the answer may be in a document not indexed yet, and a
 * degraded answer is neither trusted nor cached. The endpoint decodes into it and encodes what
 * it answers; a caller in the same process (the embedded mode) calls it directly.
 * The query, HyDE text and seeds are bounded here (see RETRIEVE_QUERY_MAX_CHARS), before any is tokenized.
 */
export function retrieveHandler({
  retriever,
  workerId,
  metrics,
  changesWaiting,
}: Omit<RetrieveEndpointDeps, 'name' | 'subject'>): (request: VerifiedRetrieveRequest) => Promise<Retrieved> {
  return async (request) => {
    const { ctx } = request;
    if (longerThanChars(request.query, RETRIEVE_QUERY_MAX_CHARS)) {
      throw new ValidationError(
        `retrieval query is longer than the ${RETRIEVE_QUERY_MAX_CHARS} characters a retrieve request may carry`,
      );
    }
    if (request.seeds.length > RETRIEVE_MAX_SEEDS) {
      throw new ValidationError(
        `a retrieve request carries ${request.seeds.length} seeds, over the ${RETRIEVE_MAX_SEEDS} it may`,
      );
    }
    if (request.seeds.some((seed) => longerThanChars(seed, RETRIEVE_QUERY_MAX_CHARS))) {
      throw new ValidationError(
        `a retrieval seed is longer than the ${RETRIEVE_QUERY_MAX_CHARS} characters a query may be`,
      );
    }
    const hydeText = clipToChars(request.hydeText, RETRIEVE_HYDE_MAX_CHARS);
    const result = await retriever.retrieve({
      query: request.query,
      ...(hydeText ? { hydeText } : {}),
      scope: { tenantId: ctx.scope.tenantId, kbIds: ctx.scope.kbIds, docIds: ctx.scope.docIds },
      topK: request.topK,
      hop: request.hop,
      seeds: request.seeds,
      deadlineUnixMs: ctx.deadlineUnixMs,
    });
    for (const path of result.paths) {
      metrics.retrievalPathDuration.observe({ path: path.path, outcome: path.outcome }, path.ms / 1000);
      if (path.outcome === 'ok') metrics.retrievalPathHits.observe({ path: path.path }, path.hits);
      else metrics.degradedRetrievals.inc({ path: path.path, reason: path.outcome });
    }
    metrics.retrievalFusedSize.observe(result.chunks.length);
    if (request.seeds.some((seed) => seed.trim() !== '')) {
      metrics.seededRetrievals.inc({ graph: result.noGraphReason ? 'none' : 'walked' });
      if (!result.noGraphReason) metrics.entityGraphWalkDuration.observe(result.timings.graphMs / 1000);
    }
    const degradedReasons = [...result.degradedReasons];
    if (result.chunks.length === 0 && (await changesWaiting(ctx.scope.tenantId, ctx.scope.kbIds))) {
      degradedReasons.push('the search index is still catching up with document changes not applied yet');
      metrics.degradedRetrievals.inc({ path: 'index', reason: 'catching_up' });
    }
    const span = trace.getActiveSpan();
    span?.setAttributes({
      'hopline.question_id': ctx.questionId,
      'hopline.tenant_id': ctx.scope.tenantId,
      'hopline.kb_ids': [...ctx.scope.kbIds],
      'hopline.hop': request.hop,
      'hopline.retrieval.hits': result.chunks.length,
      'hopline.graph.seeds': request.seeds.length,
      'hopline.degraded': degradedReasons.length > 0,
      ...(degradedReasons.length > 0 ? { 'hopline.degraded_reasons': degradedReasons } : {}),
    });
    return {
      chunks: result.chunks,
      degraded: degradedReasons.length > 0,
      degradedReasons,
      timings: result.timings,
      workerId,
      noGraphReason: result.noGraphReason ?? '',
    };
  };
}

/** The retrieve request/reply endpoint: retrieveHandler over the wire. */
export function retrieveEndpoint({ name, subject, ...deps }: RetrieveEndpointDeps): Endpoint {
  const retrieve = retrieveHandler(deps);
  return {
    name,
    subject,
    async handle(message) {
      const request = codecs.retrieveRequest.decode(message.data);
      const answer = await retrieve({ ...request, ctx: requireRequestContext(request.ctx) });
      return { data: codecs.retrieveResponse.encode(answer) };
    },
  };
}
