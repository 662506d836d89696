import { CancelledError, DeadlineExceededError, HoplineError, UnavailableError } from '@hopline/contracts';
import { z } from 'zod';
import { modelServerError } from '../util/model-server-status.js';
import type { RelevanceScorer } from './relevance-scorer.js';

/**
 * `tei`: Hugging Face text-embeddings-inference (`{query, texts}` → `[{index, score}]`).
 * `cohere`: Cohere and the servers that copy it, Jina, vLLM, Infinity
 * (`{model, query, documents}` → `{results: [{index, relevance_score}]}`).
 */
export type RerankApi = 'tei' | 'cohere';

export interface CrossEncoderClientOptions {
  /** Base URL; the client POSTs to `<url>/rerank`. */
  url: string;
  api: RerankApi;
  apiKey?: string;
  model?: string;
  /**
   * The most texts one request carries (default `DEFAULT_RERANK_MAX_BATCH`): a server refuses a
   * request over its cap, so a call with more texts is split into several.
   */
  maxBatch?: number;
  /** Injected for tests; defaults to the global fetch. */
  fetch?: typeof fetch;
}

const teiResponse = z.array(z.object({ index: z.number().int().nonnegative(), score: z.number() }));
const cohereResponse = z.object({
  results: z.array(z.object({ index: z.number().int().nonnegative(), relevance_score: z.number() })),
});

/**
 * TEI's default `--max-client-batch-size`: it refuses a request with more texts ("batch size 33 >
 * maximum allowed batch size 32").
 */
export const DEFAULT_RERANK_MAX_BATCH = 32;

/**
 * Requests of one call in flight at once: enough that the server batches them together, few
 * enough that one call of many texts does not queue ahead of every other caller's.
 */
const BATCHES_IN_FLIGHT = 4;

interface Batch {
  /** Where the batch's first text is in the call's texts. */
  offset: number;
  texts: readonly string[];
}

/**
 * A cross-encoder behind an HTTP rerank API; failures carry the taxonomy a breaker reads. A call
 * with more than `maxBatch` texts is sent as several requests, and one failing fails the call.
 */
export function createCrossEncoderClient(options: CrossEncoderClientOptions): RelevanceScorer {
  const endpoint = `${options.url.replace(/\/+$/, '')}/rerank`;
  const doFetch = options.fetch ?? fetch;
  const maxBatch = options.maxBatch ?? DEFAULT_RERANK_MAX_BATCH;
  if (!Number.isInteger(maxBatch) || maxBatch < 1)
    throw new RangeError(`maxBatch must be a positive integer, not ${maxBatch}`);

  /**
   * One request's scores, in the batch's order. `signal` ends it when the caller leaves or another
   * batch fails; `caller`, the caller's alone, tells the two apart.
   */
  async function scoreBatch(
    query: string,
    { offset, texts }: Batch,
    caller: AbortSignal,
    signal: AbortSignal,
  ): Promise<number[]> {
    const body =
      options.api === 'tei'
        ? { query, texts, truncate: true, raw_scores: false }
        : { query, documents: texts, top_n: texts.length, ...(options.model ? { model: options.model } : {}) };
    let response: Response;
    try {
      response = await doFetch(endpoint, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
        },
        body: JSON.stringify(body),
        signal,
      });
    } catch (error) {
      throw transportError(error, caller, endpoint);
    }
    if (!response.ok) throw await statusError(response, endpoint);
    let payload: unknown;
    try {
      payload = await response.json();
    } catch (error) {
      throw transportError(error, caller, endpoint);
    }
    const pairs = parsePairs(options.api, payload, endpoint);
    const scores: Array<number | undefined> = texts.map(() => undefined);
    for (const { index, score } of pairs) {
      if (index >= texts.length)
        throw new UnavailableError(`rerank API ${endpoint} scored index ${index} of ${texts.length} texts`);
      scores[index] = score;
    }
    const missing = scores.findIndex((score) => score === undefined);
    if (missing >= 0)
      throw new UnavailableError(`rerank API ${endpoint} returned no score for text ${offset + missing}`);
    return scores as number[];
  }

  return {
    name: `cross-encoder:${options.model ?? options.api}`,
    async score(query, texts, signal) {
      if (texts.length === 0) return [];
      const batches = splitEvenly(texts, maxBatch);
      // A failed batch aborts the others: the call has failed, their answers would go unread.
      const failed = new AbortController();
      const batchSignal = AbortSignal.any([signal, failed.signal]);
      const scores: number[] = [];
      let next = 0;
      const sendBatches = async (): Promise<void> => {
        for (let batch = batches[next++]; batch; batch = batches[next++]) {
          try {
            const batchScores = await scoreBatch(query, batch, signal, batchSignal);
            batchScores.forEach((score, index) => (scores[batch.offset + index] = score));
          } catch (error) {
            failed.abort(error);
            throw error;
          }
        }
      };
      // The first failure is the call's: the batches it aborts fail after it.
      await Promise.all(Array.from({ length: Math.min(BATCHES_IN_FLIGHT, batches.length) }, sendBatches));
      return scores;
    },
  };
}

/** Batches of at most `maxBatch` texts, as even as that allows: a call lasts as long as its largest batch. */
function splitEvenly(texts: readonly string[], maxBatch: number): Batch[] {
  const count = Math.ceil(texts.length / maxBatch);
  return Array.from({ length: count }, (_, index) => {
    const offset = Math.floor((index * texts.length) / count);
    return { offset, texts: texts.slice(offset, Math.floor(((index + 1) * texts.length) / count)) };
  });
}

function parsePairs(api: RerankApi, payload: unknown, endpoint: string): Array<{ index: number; score: number }> {
  if (api === 'tei') {
    const parsed = teiResponse.safeParse(payload);
    if (parsed.success) return parsed.data;
    throw new UnavailableError(
      `rerank API ${endpoint} sent an unexpected body: ${parsed.error.issues[0]?.message ?? 'invalid'}`,
    );
  }
  const parsed = cohereResponse.safeParse(payload);
  if (parsed.success)
    return parsed.data.results.map((result) => ({ index: result.index, score: result.relevance_score }));
  throw new UnavailableError(
    `rerank API ${endpoint} sent an unexpected body: ${parsed.error.issues[0]?.message ?? 'invalid'}`,
  );
}

function transportError(error: unknown, signal: AbortSignal, endpoint: string): Error {
  if (signal.aborted) {
    const reason: unknown = signal.reason;
    if (reason instanceof HoplineError) return reason;
    return new CancelledError(`rerank call to ${endpoint} was aborted`, { cause: reason });
  }
  if (error instanceof Error && error.name === 'TimeoutError')
    return new DeadlineExceededError(`rerank call to ${endpoint} timed out`, { cause: error });
  return new UnavailableError(`rerank API ${endpoint} unreachable: ${(error as Error).message}`, { cause: error });
}

/** Server trouble and rate limits count against the dependency; a refused text does not (see modelServerError). */
async function statusError(response: Response, endpoint: string): Promise<HoplineError> {
  const detail = (await response.text().catch(() => '')).slice(0, 200);
  const message = `rerank API ${endpoint} answered ${response.status}${detail ? `: ${detail}` : ''}`;
  return modelServerError(response.status, message, undefined);
}
