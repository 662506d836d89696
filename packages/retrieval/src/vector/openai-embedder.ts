import {
  CancelledError,
  DeadlineExceededError,
  HoplineError,
  UnavailableError,
  ValidationError,
} from '@hopline/contracts';
import OpenAI from 'openai';
import { z } from 'zod';
import type { Embedder } from './embedder.js';
import { normalizeInPlace } from './embedder.js';
import { modelServerError } from '../util/model-server-status.js';

export interface OpenAiEmbedderOptions {
  /** Any OpenAI-compatible server: OpenAI, vLLM, Ollama, TEI (`…/v1`). */
  baseURL: string;
  apiKey?: string;
  model: string;
  /** The vector length the model returns; indexes are sized by it, so it is checked. */
  dimensions: number;
  /**
   * Ask the server to shorten vectors to `dimensions` (text-embedding-3 models support it,
   * most self-hosted servers reject it). Default false.
   */
  requestDimensions?: boolean;
  /** Texts per request (default 64). */
  batchSize?: number;
}

const embeddingsResponse = z.object({
  data: z.array(z.object({ index: z.number().int().nonnegative(), embedding: z.array(z.number()) })),
});

/**
 * Embeddings from an OpenAI-compatible `/embeddings` endpoint. Retries are left to the caller's
 * guard (the SDK's own are off), and failures map onto the error taxonomy so a breaker counts
 * only what says something about the server's health.
 */
export class OpenAiEmbedder implements Embedder {
  readonly model: string;
  readonly dimensions: number;
  private readonly client: OpenAI;
  private readonly batchSize: number;
  private readonly requestDimensions: boolean;

  constructor(options: OpenAiEmbedderOptions) {
    if (!Number.isInteger(options.dimensions) || options.dimensions < 1) {
      throw new ValidationError(`embedding dimensions must be a positive integer, got ${options.dimensions}`);
    }
    this.model = options.model;
    this.dimensions = options.dimensions;
    this.batchSize = options.batchSize ?? 64;
    this.requestDimensions = options.requestDimensions ?? false;
    // Servers that need no key (vLLM, Ollama) still get a placeholder: the SDK insists on one.
    this.client = new OpenAI({ baseURL: options.baseURL, apiKey: options.apiKey ?? 'unused', maxRetries: 0 });
  }

  async embed(texts: readonly string[], signal: AbortSignal): Promise<Float32Array[]> {
    const vectors: Float32Array[] = [];
    for (let start = 0; start < texts.length; start += this.batchSize) {
      vectors.push(...(await this.embedBatch(texts.slice(start, start + this.batchSize), signal)));
    }
    return vectors;
  }

  private async embedBatch(batch: readonly string[], signal: AbortSignal): Promise<Float32Array[]> {
    let raw: unknown;
    try {
      raw = await this.client.embeddings.create(
        {
          model: this.model,
          input: [...batch],
          encoding_format: 'float',
          ...(this.requestDimensions ? { dimensions: this.dimensions } : {}),
        },
        { signal },
      );
    } catch (error) {
      throw mapError(error, signal, this.model);
    }
    const parsed = embeddingsResponse.safeParse(raw);
    if (!parsed.success)
      throw new UnavailableError(
        `embedding server sent an unexpected body for ${this.model}: ${parsed.error.issues[0]?.message ?? 'invalid'}`,
      );
    const vectors: Array<Float32Array | undefined> = batch.map(() => undefined);
    for (const item of parsed.data.data) {
      if (item.index >= batch.length)
        throw new UnavailableError(`embedding server returned index ${item.index} for ${batch.length} texts`);
      if (item.embedding.length !== this.dimensions) {
        throw new UnavailableError(
          `${this.model} returned ${item.embedding.length} dimensions, configured for ${this.dimensions}`,
        );
      }
      vectors[item.index] = normalizeInPlace(Float32Array.from(item.embedding));
    }
    const missing = vectors.findIndex((vector) => vector === undefined);
    if (missing >= 0) throw new UnavailableError(`embedding server returned no vector for text ${missing}`);
    return vectors as Float32Array[];
  }
}

function mapError(error: unknown, signal: AbortSignal, model: string): HoplineError {
  if (signal.aborted) {
    const reason: unknown = signal.reason;
    return reason instanceof HoplineError
      ? reason
      : new CancelledError(`embedding call for ${model} was aborted`, { cause: reason });
  }
  if (error instanceof OpenAI.APIConnectionTimeoutError)
    return new DeadlineExceededError(`embedding call for ${model} timed out`, { cause: error });
  if (error instanceof OpenAI.APIConnectionError)
    return new UnavailableError(`embedding server unreachable: ${error.message}`, { cause: error });
  if (error instanceof OpenAI.APIError) {
    const message = `embedding server answered ${error.status ?? 'an error'} for ${model}: ${error.message}`;
    return error.status === undefined
      ? new UnavailableError(message, { cause: error })
      : modelServerError(error.status, message, error);
  }
  return new UnavailableError(`embedding call for ${model} failed: ${(error as Error).message}`, { cause: error });
}
