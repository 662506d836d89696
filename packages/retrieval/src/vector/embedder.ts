import type { FusionMethod } from '../hybrid/fusion.js';

/**
 * How an embedder's ranking is best fused with BM25's (whose weight stays 1), as measured for
 * that embedder. A retriever uses it unless its own options say otherwise.
 */
export interface FusionDefaults {
  method: FusionMethod;
  vectorWeight: number;
}

/** The embeddings port: one adapter per model provider, all returning unit-length vectors. */
export interface Embedder {
  /** Names the model, e.g. "hashing-ngram-384" or "text-embedding-3-small". */
  readonly model: string;
  readonly dimensions: number;
  /** Absent for a real embedding model: it is fused by RRF at weight 1, as strong as BM25. */
  readonly fusion?: FusionDefaults;
  /** One vector per text, in input order, each of length `dimensions` and L2-normalised. */
  embed(texts: readonly string[], signal: AbortSignal): Promise<Float32Array[]>;
}

/** Scales a vector to unit length in place (a zero vector stays zero) and returns it. */
export function normalizeInPlace(vector: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += (vector[i] as number) * (vector[i] as number);
  if (sum === 0) return vector;
  const scale = 1 / Math.sqrt(sum);
  for (let i = 0; i < vector.length; i++) vector[i] = (vector[i] as number) * scale;
  return vector;
}

/** The text a chunk is embedded as: its title gives the passage its subject. */
export function embeddingText(title: string, text: string): string {
  return title ? `${title}\n${text}` : text;
}
