import { ENGLISH_STOP_WORDS, foldText } from '@hopline/text';
import type { Embedder, FusionDefaults } from './embedder.js';
import { normalizeInPlace } from './embedder.js';

export interface HashingEmbedderOptions {
  /** Vector length (default 384). */
  dimensions?: number;
}

const WORD = /[\p{L}\p{N}]+/gu;
const HAN = /[\u3400-\u9fff\uf900-\ufaff]/u;
const HAN_RUN = /[\u3400-\u9fff\uf900-\ufaff]+/gu;
// Measured on the multi-hop dev set (vector path alone, chain recall@10): words + 3-grams
// 44.3, words + 3- and 4-grams 45.3, words alone 37.7; 768 dimensions add ~4 points for
// twice the memory and scan time.
const WORD_WEIGHT = 1;
const GRAM_WEIGHT = 0.35;
const GRAM_SIZES = [3, 4] as const;

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
 * A deterministic, offline embedder: features are words and character 3- and 4-grams of Latin
 * text, and character unigrams and bigrams of Chinese (which has no spaces to find words by),
 * hashed with a sign bit into a fixed-length vector (the "hashing trick"). Word features carry
 * exact matches; n-grams make "Athletics" and "athletic", or a misspelling, land close.
 *
 * It knows no synonyms and no word rarity: it is a lexical signal, weaker than BM25 on the
 * same text, and the honest offline stand-in for a neural embedding model, not a substitute.
 */
export class HashingEmbedder implements Embedder {
  readonly dimensions: number;
  readonly model: string;
  /**
   * Fused as a tie-breaker and a source of extra candidates, not as BM25's equal. Measured on
   * the multi-hop dev set (300 questions over the 3,337 pooled paragraphs, `pnpm eval --mode
   * single --k 10`), chain recall@10: BM25 alone 64.0. RRF stays below it at every vector
   * weight (1: 57.0, 0.3: 58.7, 0.1: 63.0, 0.05: 62.7, 0.02: 63.7): this path ranks by the same
   * words as BM25, so its ranks 20–50 are noise that RRF still counts. Relative-score fusion
   * gives 64.3 at every weight from 0.05 to 0.2, 63.7 at 0.3, 63.3 at 0.5, 60.3 at 1; 0.1 sits
   * mid-plateau. The hop loop (`--mode multihop`) moves with the reasoner, so each set of
   * figures is one run of one tree: BM25 alone 86.7, RRF at 1 82.3, relative-score at 0.1 86.7;
   * on an earlier reasoner 86.0, 84.3 and 86.0 (RRF at 0.1: 85.7).
   * Embedder changes measured against this: sublinear term frequency, 768 or 1024 dimensions and
   * query words weighted by BM25's IDF raise the vector path alone (chain recall 45.3 here; 57.3
   * with IDF at 1024) but not the fused result (63.7–64.7 at weights 0.1–0.3, the same as this),
   * and the IDF would come from the BM25 index, which is the path that is gone when the vector
   * path has to answer alone.
   */
  readonly fusion: FusionDefaults = { method: 'relative-score', vectorWeight: 0.1 };

  constructor(options: HashingEmbedderOptions = {}) {
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
    const vector = new Float32Array(this.dimensions);
    const folded = foldText(text).toLowerCase();
    const latin = HAN.test(folded) ? folded.replace(HAN_RUN, ' ') : folded;
    for (const match of latin.matchAll(WORD)) {
      const word = match[0];
      if (ENGLISH_STOP_WORDS.has(word)) continue;
      this.add(vector, `w:${word}`, WORD_WEIGHT);
      const padded = `#${word}#`;
      for (const size of GRAM_SIZES) {
        for (let i = 0; i + size <= padded.length; i++) this.add(vector, padded.slice(i, i + size), GRAM_WEIGHT);
      }
    }
    for (const match of folded.matchAll(HAN_RUN)) {
      const run = match[0];
      for (let i = 0; i < run.length; i++) {
        this.add(vector, run[i] as string, GRAM_WEIGHT);
        if (i + 1 < run.length) this.add(vector, run.slice(i, i + 2), WORD_WEIGHT);
      }
    }
    return normalizeInPlace(vector);
  }

  private add(vector: Float32Array, feature: string, weight: number): void {
    const h = hash(feature);
    const slot = h % this.dimensions;
    vector[slot] = (vector[slot] as number) + ((h & 0x80000000) === 0 ? weight : -weight);
  }
}
