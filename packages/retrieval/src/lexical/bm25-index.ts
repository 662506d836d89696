import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { BlobWriter, readBlob } from '../storage/snapshot-blobs.js';
import { TopK } from '../util/top-k.js';

/**
 * An in-process BM25 inverted index over pre-tokenised documents.
 *
 * Layout. Documents live in partitions (one per tenant + knowledge base), so the caller's scope
 * is applied by which postings are read at all: a search never scores, and can never be starved
 * by, another tenant's documents. Each partition holds immutable segments in CSR form (one
 * offsets array, one doc-id array and one term-frequency array for all its terms) plus a small
 * mutable buffer for recent additions; the buffer is frozen into a segment before a search reads
 * it, and small segments are merged geometrically so the segment count stays logarithmic.
 * Typed arrays keep a posting at 6 bytes and the scoring loop free of object allocation.
 *
 * Deletes mark the document dead in its segment; the postings stay until that segment is
 * merged (any segment more than a quarter dead is rewritten on the next freeze). As in Lucene,
 * document frequencies and the N of the IDF count the dead documents until then, so that df
 * never exceeds N and no term weighs less than nothing; the average length counts live ones.
 */

export interface Bm25Parameters {
  /** Term-frequency saturation (default 1.5). */
  k1: number;
  /** Length normalisation, 0 (none) to 1 (full) (default 0.75). */
  b: number;
}

export const DEFAULT_BM25_PARAMETERS: Bm25Parameters = { k1: 1.5, b: 0.75 };

export interface Bm25Hit {
  partition: string;
  key: string;
  score: number;
}

export interface Bm25SearchResult {
  hits: Bm25Hit[];
  /** Postings read to answer this query: the unit of work the latency follows. */
  postingsTouched: number;
}

const MAX_TF = 0xffff;
// A buffer is frozen into a segment once it holds this many documents even if nobody searches:
// buffered postings are plain JS arrays, several times the size of a frozen segment's.
const BUFFER_LIMIT = 4_096;
const DEAD_FRACTION_TO_REWRITE = 0.25;

const BM25_MANIFEST_FILE = 'bm25.json';
const BM25_BLOBS_FILE = 'bm25.bin';
const blobRefSchema = z.tuple([z.number().int().nonnegative(), z.number().int().nonnegative()]);
const bm25ManifestSchema = z.object({
  // The tokenizer version the terms were made by (`Tokenizer.version`); absent in snapshots
  // written before it was recorded, whose terms are therefore of no known version.
  analyzer: z.string().optional(),
  partitions: z.array(
    z.object({
      name: z.string(),
      segments: z.array(
        z.object({
          terms: z.array(z.string()),
          keys: z.array(z.string()),
          offsets: blobRefSchema,
          docs: blobRefSchema,
          tfs: blobRefSchema,
          lengths: blobRefSchema,
          dead: blobRefSchema,
        }),
      ),
    }),
  ),
});

/** Postings of the mutable buffer: per term a flat [doc, tf, doc, tf, ...] list. */
class BufferSegment {
  readonly keys: string[] = [];
  readonly lengths: number[] = [];
  readonly postings = new Map<string, number[]>();

  add(key: string, tokens: readonly string[]): number {
    const doc = this.keys.length;
    this.keys.push(key);
    this.lengths.push(tokens.length);
    const counts = new Map<string, number>();
    for (const token of tokens) counts.set(token, (counts.get(token) ?? 0) + 1);
    for (const [term, tf] of counts) {
      let list = this.postings.get(term);
      if (!list) {
        list = [];
        this.postings.set(term, list);
      }
      list.push(doc, Math.min(tf, MAX_TF));
    }
    return doc;
  }
}

/** A segment as plain arrays: terms in term-id order, postings in CSR form, one row per document. */
interface SegmentArrays {
  terms: string[];
  offsets: Uint32Array;
  docs: Uint32Array;
  tfs: Uint16Array;
  keys: string[];
  lengths: Uint32Array;
  dead: Uint8Array;
}

class Segment {
  readonly termIds: Map<string, number>;
  readonly offsets: Uint32Array;
  readonly docs: Uint32Array;
  readonly tfs: Uint16Array;
  readonly keys: string[];
  readonly lengths: Uint32Array;
  readonly dead: Uint8Array;
  deadCount = 0;
  private scratchScores: Float32Array | undefined;
  private scratchTouched: Uint32Array | undefined;

  constructor(fields: SegmentArrays) {
    this.termIds = new Map(fields.terms.map((term, id) => [term, id]));
    this.offsets = fields.offsets;
    this.docs = fields.docs;
    this.tfs = fields.tfs;
    this.keys = fields.keys;
    this.lengths = fields.lengths;
    this.dead = fields.dead;
    this.deadCount = fields.dead.reduce((sum, flag) => sum + flag, 0);
  }

  static fromPostings(keys: string[], lengths: ArrayLike<number>, postings: Map<string, number[]>): Segment {
    let total = 0;
    for (const list of postings.values()) total += list.length >> 1;
    const offsets = new Uint32Array(postings.size + 1);
    const docs = new Uint32Array(total);
    const tfs = new Uint16Array(total);
    let term = 0;
    let at = 0;
    for (const list of postings.values()) {
      offsets[term] = at;
      for (let i = 0; i < list.length; i += 2) {
        docs[at] = list[i] as number;
        tfs[at] = list[i + 1] as number;
        at++;
      }
      term++;
    }
    offsets[term] = at;
    return new Segment({
      terms: [...postings.keys()],
      offsets,
      docs,
      tfs,
      keys,
      lengths: Uint32Array.from(lengths),
      dead: new Uint8Array(keys.length),
    });
  }

  /** The arrays a snapshot keeps; a segment built from them is this one. */
  arrays(): SegmentArrays {
    const terms = new Array<string>(this.termIds.size);
    for (const [term, id] of this.termIds) terms[id] = term;
    const { offsets, docs, tfs, keys, lengths, dead } = this;
    return { terms, offsets, docs, tfs, keys, lengths, dead };
  }

  get size(): number {
    return this.keys.length;
  }

  get liveCount(): number {
    return this.keys.length - this.deadCount;
  }

  documentFrequency(token: string): number {
    const term = this.termIds.get(token);
    if (term === undefined) return 0;
    return (this.offsets[term + 1] as number) - (this.offsets[term] as number);
  }

  scratch(): { scores: Float32Array; touched: Uint32Array } {
    this.scratchScores ??= new Float32Array(this.keys.length);
    this.scratchTouched ??= new Uint32Array(this.keys.length);
    return { scores: this.scratchScores, touched: this.scratchTouched };
  }

  /** Live documents re-numbered densely, appended to `into`: the input of a merge. */
  copyLiveInto(into: BufferSegment, onMoved: (key: string, doc: number) => void): void {
    const remap = new Int32Array(this.keys.length).fill(-1);
    for (let doc = 0; doc < this.keys.length; doc++) {
      if (this.dead[doc]) continue;
      const key = this.keys[doc] as string;
      remap[doc] = into.keys.length;
      into.keys.push(key);
      into.lengths.push(this.lengths[doc] as number);
      onMoved(key, remap[doc] as number);
    }
    for (const [token, term] of this.termIds) {
      let list: number[] | undefined;
      for (let p = this.offsets[term] as number; p < (this.offsets[term + 1] as number); p++) {
        const moved = remap[this.docs[p] as number] as number;
        if (moved < 0) continue;
        if (!list) {
          list = into.postings.get(token);
          if (!list) {
            list = [];
            into.postings.set(token, list);
          }
        }
        list.push(moved, this.tfs[p] as number);
      }
    }
  }
}

interface Location {
  segment: Segment | BufferSegment;
  doc: number;
  length: number;
}

class Partition {
  segments: Segment[] = [];
  buffer = new BufferSegment();
  readonly locations = new Map<string, Location>();
  liveLength = 0;
  /** Set by every write; a search reorganises segments only after writes. */
  private changed = false;

  get liveCount(): number {
    return this.locations.size;
  }

  /** A partition holding exactly these segments, as a snapshot kept them. */
  static restore(segments: Segment[]): Partition {
    const partition = new Partition();
    partition.segments = segments;
    for (const segment of segments) {
      for (let doc = 0; doc < segment.size; doc++) {
        if (segment.dead[doc]) continue;
        const length = segment.lengths[doc] as number;
        partition.locations.set(segment.keys[doc] as string, { segment, doc, length });
        partition.liveLength += length;
      }
    }
    return partition;
  }

  add(key: string, tokens: readonly string[]): void {
    this.remove(key);
    this.changed = true;
    const doc = this.buffer.add(key, tokens);
    this.locations.set(key, { segment: this.buffer, doc, length: tokens.length });
    this.liveLength += tokens.length;
    if (this.buffer.keys.length >= BUFFER_LIMIT) this.prepareForSearch();
  }

  remove(key: string): boolean {
    const location = this.locations.get(key);
    if (!location) return false;
    this.changed = true;
    this.locations.delete(key);
    this.liveLength -= location.length;
    if (location.segment instanceof Segment) {
      location.segment.dead[location.doc] = 1;
      location.segment.deadCount++;
    } else {
      // A buffered document is dropped from the buffer's postings when it is frozen.
      location.segment.lengths[location.doc] = -1;
    }
    return true;
  }

  /** Freezes the buffer and keeps the segment count logarithmic in the document count. */
  prepareForSearch(): void {
    if (!this.changed) return;
    this.changed = false;
    if (this.buffer.keys.length > 0) {
      const frozen = this.freezeBuffer();
      if (frozen) this.segments.push(frozen);
    }
    this.segments = this.segments.filter((segment) => segment.liveCount > 0);
    for (let i = 0; i < this.segments.length; i++) {
      const segment = this.segments[i] as Segment;
      if (segment.deadCount > segment.size * DEAD_FRACTION_TO_REWRITE) this.segments[i] = this.merge([segment]);
    }
    while (this.segments.length > 1) {
      const last = this.segments[this.segments.length - 1] as Segment;
      const previous = this.segments[this.segments.length - 2] as Segment;
      if (previous.liveCount > last.liveCount * 2) break;
      this.segments.splice(this.segments.length - 2, 2, this.merge([previous, last]));
    }
  }

  private freezeBuffer(): Segment | undefined {
    const buffer = this.buffer;
    this.buffer = new BufferSegment();
    const hasDead = buffer.lengths.some((length) => length < 0);
    let source = buffer;
    if (hasDead) {
      // Re-number the buffer without the documents removed while it was open.
      source = new BufferSegment();
      const remap = new Int32Array(buffer.keys.length).fill(-1);
      buffer.keys.forEach((key, doc) => {
        const length = buffer.lengths[doc] as number;
        if (length < 0) return;
        remap[doc] = source.keys.length;
        source.keys.push(key);
        source.lengths.push(length);
      });
      for (const [token, list] of buffer.postings) {
        const kept: number[] = [];
        for (let i = 0; i < list.length; i += 2) {
          const moved = remap[list[i] as number] as number;
          if (moved >= 0) kept.push(moved, list[i + 1] as number);
        }
        if (kept.length > 0) source.postings.set(token, kept);
      }
    }
    if (source.keys.length === 0) return undefined;
    const segment = Segment.fromPostings(source.keys, source.lengths, source.postings);
    segment.keys.forEach((key, doc) => {
      const location = this.locations.get(key);
      if (location) {
        location.segment = segment;
        location.doc = doc;
      }
    });
    return segment;
  }

  private merge(segments: Segment[]): Segment {
    const into = new BufferSegment();
    const moved: Array<[string, number]> = [];
    for (const segment of segments) segment.copyLiveInto(into, (key, doc) => moved.push([key, doc]));
    const merged = Segment.fromPostings(into.keys, into.lengths, into.postings);
    for (const [key, doc] of moved) {
      const location = this.locations.get(key);
      if (location) {
        location.segment = merged;
        location.doc = doc;
      }
    }
    return merged;
  }
}

export class Bm25Index {
  readonly parameters: Bm25Parameters;
  private readonly partitions = new Map<string, Partition>();
  private touchedTotal = 0;
  private queries = 0;

  constructor(parameters: Partial<Bm25Parameters> = {}) {
    this.parameters = { ...DEFAULT_BM25_PARAMETERS, ...parameters };
    if (!(this.parameters.k1 > 0)) throw new RangeError(`BM25 k1 must be positive, got ${this.parameters.k1}`);
    if (!(this.parameters.b >= 0 && this.parameters.b <= 1))
      throw new RangeError(`BM25 b must be in [0, 1], got ${this.parameters.b}`);
  }

  /** Adds a document, replacing any document with the same key in that partition. */
  add(partition: string, key: string, tokens: readonly string[]): void {
    let target = this.partitions.get(partition);
    if (!target) {
      target = new Partition();
      this.partitions.set(partition, target);
    }
    target.add(key, tokens);
  }

  remove(partition: string, key: string): boolean {
    return this.partitions.get(partition)?.remove(key) ?? false;
  }

  has(partition: string, key: string): boolean {
    return this.partitions.get(partition)?.locations.has(key) ?? false;
  }

  /** Live documents in one partition, or in all of them. */
  size(partition?: string): number {
    if (partition !== undefined) return this.partitions.get(partition)?.liveCount ?? 0;
    let total = 0;
    for (const target of this.partitions.values()) total += target.liveCount;
    return total;
  }

  /**
   * Writes the index to `dir` (bm25.json and bm25.bin): each partition's buffer is frozen
   * first, so the snapshot is segments only, their arrays as they are in memory. `analyzer`
   * names the tokenizer version the terms were made by.
   */
  async save(dir: string, analyzer: string): Promise<void> {
    const blobs = new BlobWriter();
    const partitions = [...this.partitions].map(([name, partition]) => {
      partition.prepareForSearch();
      return {
        name,
        segments: partition.segments.map((segment) => {
          const { terms, keys, offsets, docs, tfs, lengths, dead } = segment.arrays();
          return {
            terms,
            keys,
            offsets: blobs.add(offsets),
            docs: blobs.add(docs),
            tfs: blobs.add(tfs),
            lengths: blobs.add(lengths),
            dead: blobs.add(dead),
          };
        }),
      };
    });
    await writeFile(join(dir, BM25_BLOBS_FILE), blobs.bytes());
    await writeFile(join(dir, BM25_MANIFEST_FILE), JSON.stringify({ analyzer, partitions }));
  }

  /**
   * The index `save` wrote to `dir`, or undefined when its terms were made by another analyzer
   * than `analyzer` (the caller indexes the documents again); the parameters are configuration,
   * not state, so they are given.
   */
  static async load(
    dir: string,
    analyzer: string,
    parameters: Partial<Bm25Parameters> = {},
  ): Promise<Bm25Index | undefined> {
    const manifest = bm25ManifestSchema.parse(JSON.parse(await readFile(join(dir, BM25_MANIFEST_FILE), 'utf8')));
    if (manifest.analyzer !== analyzer) return undefined;
    const file = await readFile(join(dir, BM25_BLOBS_FILE));
    const index = new Bm25Index(parameters);
    for (const { name, segments } of manifest.partitions) {
      const restored = segments.map(
        (segment) =>
          new Segment({
            terms: segment.terms,
            keys: segment.keys,
            offsets: readBlob(file, segment.offsets, Uint32Array),
            docs: readBlob(file, segment.docs, Uint32Array),
            tfs: readBlob(file, segment.tfs, Uint16Array),
            lengths: readBlob(file, segment.lengths, Uint32Array),
            dead: readBlob(file, segment.dead, Uint8Array),
          }),
      );
      index.partitions.set(name, Partition.restore(restored));
    }
    return index;
  }

  /** Postings read by every search so far, and how many searches read them. */
  get stats(): { queries: number; postingsTouched: number } {
    return { queries: this.queries, postingsTouched: this.touchedTotal };
  }

  /**
   * Scores the documents of the named partitions only. Collection statistics (N, average
   * length, document frequencies) are those of the searched partitions together, so a search
   * over several knowledge bases ranks exactly as one index holding just them would. `accept`,
   * when given, keeps only the documents it accepts out of the ranking (statistics unchanged).
   */
  search(
    partitions: readonly string[],
    queryTokens: readonly string[],
    limit: number,
    accept?: (partition: string, key: string) => boolean,
  ): Bm25SearchResult {
    this.queries++;
    const targets: Array<[string, Partition]> = [];
    let documents = 0;
    let totalLength = 0;
    // The N of the IDF: every document the segments hold, dead ones included, as df counts them.
    let indexedDocuments = 0;
    for (const name of new Set(partitions)) {
      const target = this.partitions.get(name);
      if (!target || target.liveCount === 0) continue;
      target.prepareForSearch();
      targets.push([name, target]);
      documents += target.liveCount;
      totalLength += target.liveLength;
      for (const segment of target.segments) indexedDocuments += segment.size;
    }
    if (documents === 0 || limit <= 0 || queryTokens.length === 0) return { hits: [], postingsTouched: 0 };

    const queryCounts = new Map<string, number>();
    for (const token of queryTokens) queryCounts.set(token, (queryCounts.get(token) ?? 0) + 1);
    const { k1, b } = this.parameters;
    const averageLength = totalLength / documents || 1;
    const normBase = k1 * (1 - b);
    const normPerToken = (k1 * b) / averageLength;
    const weights = new Map<string, number>();
    for (const [token, count] of queryCounts) {
      let df = 0;
      for (const [, target] of targets) for (const segment of target.segments) df += segment.documentFrequency(token);
      if (df === 0) continue;
      const idf = Math.log(1 + (indexedDocuments - df + 0.5) / (df + 0.5));
      weights.set(token, idf * (k1 + 1) * count);
    }

    const best = new TopK<{ partition: string; segment: Segment; doc: number }>(limit);
    let touchedPostings = 0;
    for (const [name, target] of targets) {
      for (const segment of target.segments) {
        const { scores, touched } = segment.scratch();
        const { docs, tfs, offsets, lengths, dead } = segment;
        let touchedDocs = 0;
        for (const [token, weight] of weights) {
          const term = segment.termIds.get(token);
          if (term === undefined) continue;
          const end = offsets[term + 1] as number;
          const start = offsets[term] as number;
          touchedPostings += end - start;
          for (let p = start; p < end; p++) {
            const doc = docs[p] as number;
            if (dead[doc]) continue;
            const tf = tfs[p] as number;
            const previous = scores[doc] as number;
            if (previous === 0) touched[touchedDocs++] = doc;
            scores[doc] = previous + (weight * tf) / (tf + normBase + normPerToken * (lengths[doc] as number));
          }
        }
        for (let i = 0; i < touchedDocs; i++) {
          const doc = touched[i] as number;
          const score = scores[doc] as number;
          scores[doc] = 0;
          if (score > best.threshold && (!accept || accept(name, segment.keys[doc] as string)))
            best.push(score, { partition: name, segment, doc });
        }
      }
    }
    this.touchedTotal += touchedPostings;
    const hits = best.drain().map(({ score, item }) => ({
      partition: item.partition,
      key: item.segment.keys[item.doc] as string,
      score,
    }));
    return { hits, postingsTouched: touchedPostings };
  }
}
