import { approximateTokens } from '@hopline/text';
import type { IndexedChunk, TextRange } from '../backends/types.js';
import { dedupeKeyFor } from './dedupe-key.js';

/**
 * Chunking, and how the two search paths share chunks.
 *
 * Vectors want short chunks (one topic per vector; ≈256–512 tokens) and BM25 wants longer
 * windows (≈800 tokens, so the terms of a question spread over neighbouring sentences meet in
 * one document). RRF can only fuse what both paths name the same way, so both paths index the
 * SAME chunks, with the same ids and spans: the vector side embeds the chunk's own text, the
 * lexical side indexes the chunk under a window of ≈800 tokens centred on it (the chunk plus
 * its neighbours, `lexicalText`). A BM25 hit is therefore still one short chunk, fusion needs
 * no span arithmetic, every chunk found by both paths is one candidate (HYBRID), and the
 * consistency check can compare chunk counts per knowledge base one to one. The price is that
 * each token is indexed about twice on the lexical side, and that neighbours share part of
 * their BM25 score; the vector score then tells them apart.
 */

export interface ChunkerOptions {
  /** Largest vector chunk, in approximate tokens (default 384). */
  chunkTokens?: number;
  /** Length of the lexical window around a chunk (default 800). */
  lexicalWindowTokens?: number;
}

/** The parts of a document a chunk carries. */
export interface ChunkableDocument {
  tenantId: string;
  kbId: string;
  docId: string;
  version: number;
  title: string;
  text: string;
  effectiveDate: string;
  sourceUri: string;
  /** Where the pages or sections of a parsed file begin, in order (see DocumentLayout). */
  sections?: ReadonlyArray<{ start: number; fragment: string }>;
}

interface Piece extends TextRange {
  tokens: number;
}

// A sentence ends at terminal punctuation (and any closing quotes) followed by space, or at a
// line break; Chinese terminators need no following space.
const SENTENCE_END = /[.!?](?:["'”’)\]]*)(?=\s)|[。！？；]["'”’）]*|\n+/g;
const WORD = /[\u3400-\u9fff\uf900-\ufaff]|[\p{L}\p{N}]+/gu;
/**
 * approximateTokens counts a run of letters as one token however long it is, and letters outside
 * the BMP or punctuation as none: a run with no break in it (a hex dump, a PDF whose text layer
 * lost its spaces), a script it reads no words in, or a page of punctuation would be one chunk of any
 * length, too long to embed and, once retrieved, to fit a reply. No chunk or lexical window is
 * longer than this many characters for each token it may hold (6,144 for a chunk of 384 tokens;
 * prose averages about 6).
 */
const MAX_CHARS_PER_TOKEN = 16;

export function chunkDocument(doc: ChunkableDocument, options: ChunkerOptions = {}): IndexedChunk[] {
  const maxTokens = options.chunkTokens ?? 384;
  const windowTokens = options.lexicalWindowTokens ?? 800;
  const maxChars = maxTokens * MAX_CHARS_PER_TOKEN;
  // Most documents are one chunk: counting once and skipping the sentence split halves the
  // chunker's share of ingest time.
  // A chunk never spans two pages or sections, so that the one it cites holds all of it.
  const ranges = sectionRanges(doc).flatMap(({ start, end }) => {
    const text = doc.text.slice(start, end);
    const tokens = approximateTokens(text);
    const pieces =
      tokens <= maxTokens && text.length <= maxChars
        ? [{ start: 0, end: text.length, tokens }]
        : packPieces(splitPieces(text, maxTokens, maxChars), maxTokens, maxChars);
    return pieces.map((piece) => ({ ...piece, start: piece.start + start, end: piece.end + start }));
  });
  const trimmed = ranges.map((range) => trimRange(doc.text, range)).filter((range) => range.end > range.start);
  if (trimmed.length === 0) trimmed.push({ start: 0, end: doc.text.length, tokens: approximateTokens(doc.text) });

  return trimmed.map((range, index) => {
    const chunkId = `${doc.docId}#${index}`;
    const text = doc.text.slice(range.start, range.end);
    const window = lexicalWindow(trimmed, index, windowTokens, windowTokens * MAX_CHARS_PER_TOKEN);
    const chunk: IndexedChunk = {
      chunkId,
      tenantId: doc.tenantId,
      kbId: doc.kbId,
      docId: doc.docId,
      docVersion: doc.version,
      title: doc.title,
      text,
      span: { start: range.start, end: range.end },
      dedupeKey: dedupeKeyFor(chunkId, text),
      effectiveDate: doc.effectiveDate,
      sourceUri: sourceOf(doc, range.start),
    };
    if (window.start < range.start || window.end > range.end)
      chunk.lexicalText = doc.text.slice(window.start, window.end);
    return chunk;
  });
}

/** The stretches of text between section starts (the whole text when it has none). */
function sectionRanges(doc: ChunkableDocument): TextRange[] {
  const starts = [0, ...(doc.sections ?? []).map((section) => section.start)].filter(
    (start, i, all) => start < doc.text.length && (i === 0 || start > (all[i - 1] as number)),
  );
  return starts.map((start, i) => ({ start, end: starts[i + 1] ?? doc.text.length }));
}

/** The document's source with the fragment of the page or section that `offset` falls in. */
function sourceOf(doc: ChunkableDocument, offset: number): string {
  let fragment: string | undefined;
  for (const section of doc.sections ?? []) {
    if (section.start > offset) break;
    fragment = section.fragment;
  }
  return fragment ? `${doc.sourceUri}#${fragment}` : doc.sourceUri;
}

/**
 * Sentences, each no longer than `maxTokens` and `maxChars` (an over-long sentence is cut at word
 * edges, a word or a stretch without words longer than `maxChars` at its length).
 */
function splitPieces(text: string, maxTokens: number, maxChars: number): Piece[] {
  const pieces: Piece[] = [];
  let start = 0;
  const push = (end: number): void => {
    if (end <= start) return;
    const tokens = approximateTokens(text.slice(start, end));
    if (tokens <= maxTokens && end - start <= maxChars) pieces.push({ start, end, tokens });
    else
      for (const piece of cutByWords(text, start, end, maxTokens)) pieces.push(...cutByLength(text, piece, maxChars));
    start = end;
  };
  for (const match of text.matchAll(SENTENCE_END)) push(match.index + match[0].length);
  push(text.length);
  return pieces;
}

function cutByWords(text: string, from: number, to: number, maxTokens: number): Piece[] {
  const pieces: Piece[] = [];
  let start = from;
  let tokens = 0;
  const segment = text.slice(from, to);
  for (const match of segment.matchAll(WORD)) {
    if (tokens === maxTokens) {
      const end = from + match.index;
      pieces.push({ start, end, tokens });
      start = end;
      tokens = 0;
    }
    tokens++;
  }
  pieces.push({ start, end: to, tokens });
  return pieces;
}

/** A piece longer than `maxChars`, cut at the last space within it, else at that length. */
function cutByLength(text: string, piece: Piece, maxChars: number): Piece[] {
  const pieces: Piece[] = [];
  let { start } = piece;
  while (piece.end - start > maxChars) {
    // Looked for within the piece only: a search of the whole text back from there would
    // cost a long text without spaces time quadratic in its length.
    const space = text.slice(start + 1, start + maxChars + 1).lastIndexOf(' ');
    let end = space < 0 ? start + maxChars : start + 1 + space;
    // Never between the two halves of a character outside the BMP; a lone half (which JSON lets
    // through) at the piece's start stays with it, or the cut would not move on.
    if (end - 1 > start && /[\uD800-\uDBFF]/.test(text[end - 1] as string)) end--;
    pieces.push({ start, end, tokens: approximateTokens(text.slice(start, end)) });
    start = end;
  }
  pieces.push({ start, end: piece.end, tokens: approximateTokens(text.slice(start, piece.end)) });
  return pieces;
}

/** Greedily packs consecutive sentences into chunks of at most `maxTokens` and `maxChars`. */
function packPieces(pieces: Piece[], maxTokens: number, maxChars: number): Piece[] {
  const chunks: Piece[] = [];
  let current: Piece | undefined;
  for (const piece of pieces) {
    if (current && current.tokens + piece.tokens <= maxTokens && piece.end - current.start <= maxChars) {
      current.end = piece.end;
      current.tokens += piece.tokens;
      continue;
    }
    if (current) chunks.push(current);
    current = { ...piece };
  }
  if (current) chunks.push(current);
  return chunks;
}

function trimRange(text: string, range: Piece): Piece {
  let { start, end } = range;
  while (start < end && /\s/.test(text[start] as string)) start++;
  while (end > start && /\s/.test(text[end - 1] as string)) end--;
  return { start, end, tokens: range.tokens };
}

/** The chunk grown by whole neighbours, alternating after/before, up to `windowTokens` and `windowChars`. */
function lexicalWindow(chunks: Piece[], index: number, windowTokens: number, windowChars: number): TextRange {
  const self = chunks[index] as Piece;
  let first = index;
  let last = index;
  let tokens = self.tokens;
  let preferNext = true;
  for (;;) {
    const next = chunks[last + 1];
    const previous = chunks[first - 1];
    const start = (chunks[first] as Piece).start;
    const end = (chunks[last] as Piece).end;
    const canGrowAfter = next !== undefined && tokens + next.tokens <= windowTokens && next.end - start <= windowChars;
    const canGrowBefore =
      previous !== undefined && tokens + previous.tokens <= windowTokens && end - previous.start <= windowChars;
    if (!canGrowAfter && !canGrowBefore) break;
    if (canGrowAfter && (preferNext || !canGrowBefore)) {
      last++;
      tokens += (next as Piece).tokens;
    } else {
      first--;
      tokens += (previous as Piece).tokens;
    }
    preferNext = !preferNext;
  }
  return { start: (chunks[first] as Piece).start, end: (chunks[last] as Piece).end };
}
