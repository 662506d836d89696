import { ENGLISH_STOP_WORDS } from '../text/english.js';
import { foldText } from '../text/normalize.js';
import type { Embedder } from './embedder.js';
import { normalizeInPlace } from './embedder.js';

export interface HashingEmbedderOptions {
  /** Vector length (default 384). */
  dimensions?: number;
  wordWeight?: number;
  trigramWeight?: number;
  sublinear?: boolean;
}

const WORD = /[\p{L}\p{N}]+/gu;
const HAN = /[\u3400-\u9fff\uf900-\ufaff]/u;
const HAN_RUN = /[\u3400-\u9fff\uf900-\ufaff]+/gu;
const WORD_WEIGHT = 1;
const TRIGRAM_WEIGHT = 0.35;

/** FNV-1a over UTF-16 code units, then a murmur finaliser so low bits are well mixed. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * A deterministic, offline embedder: features are words and character trigrams of Latin text,
 * and character unigrams and bigrams of Chinese (which has no spaces to find words by), hashed
 * with a sign bit into a fixed-length vector (the "hashing trick"). Word features carry the
 * exact matches; trigrams make "Athletics" and "athletic", or a misspelling, land close. It
 * knows no synonyms: it is the honest offline stand-in for a neural embedding model.
 */
export class HashingEmbedder implements Embedder {
  readonly dimensions: number;
  readonly model: string;
  private readonly wordWeight: number;
  private readonly trigramWeight: number;
  private readonly sublinear: boolean;

  constructor(options: HashingEmbedderOptions = {}) {
    this.wordWeight = options.wordWeight ?? WORD_WEIGHT;
    this.trigramWeight = options.trigramWeight ?? TRIGRAM_WEIGHT;
    this.sublinear = options.sublinear ?? false;
    this.dimensions = options.dimensions ?? 384;
    if (!Number.isInteger(this.dimensions) || this.dimensions < 8) {
      throw new RangeError(`hashing embedder dimensions must be an integer ≥ 8, got ${this.dimensions}`);
    }
    this.model = `hashing-ngram-${this.dimensions}`;
  }

  async embed(texts: readonly string[], signal: AbortSignal): Promise<Float32Array[]> {
    signal.throwIfAborted();
    return texts.map((text) => this.embedOne(text));
  }

  embedOne(text: string): Float32Array {
    const features = new Map<string, number>();
    const folded = foldText(text).toLowerCase();
    for (const match of folded.matchAll(WORD)) {
      const word = match[0];
      if (HAN.test(word)) continue;
      if (ENGLISH_STOP_WORDS.has(word)) continue;
      this.count(features, `w:${word}`, this.wordWeight);
      const padded = `#${word}#`;
      for (let i = 0; i + 3 <= padded.length; i++) this.count(features, padded.slice(i, i + 3), this.trigramWeight);
    }
    for (const match of folded.matchAll(HAN_RUN)) {
      const run = match[0];
      for (let i = 0; i < run.length; i++) {
        this.count(features, run[i] as string, this.trigramWeight);
        if (i + 1 < run.length) this.count(features, run.slice(i, i + 2), this.wordWeight);
      }
    }
    const vector = new Float32Array(this.dimensions);
    for (const [feature, weight] of features) this.add(vector, feature, weight);
    return normalizeInPlace(vector);
  }

  private count(features: Map<string, number>, feature: string, weight: number): void {
    const previous = features.get(feature);
    if (previous === undefined) features.set(feature, weight);
    else if (!this.sublinear) features.set(feature, previous + weight);
    else features.set(feature, previous + weight / (1 + Math.log(1 + previous / weight)));
  }

  private add(vector: Float32Array, feature: string, weight: number): void {
    const h = hash(feature);
    const slot = h % this.dimensions;
    vector[slot] = (vector[slot] as number) + ((h & 0x80000000) === 0 ? weight : -weight);
  }
}
