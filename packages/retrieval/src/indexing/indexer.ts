import type { Document__Output, DocumentRef__Output, IngestCommand__Output } from '@hopline/contracts';
import { ValidationError, versionAheadOfClock } from '@hopline/contracts';
import type {
  EmbeddedChunk,
  IndexedChunk,
  LexicalBackend,
  VectorBackend,
  VersionedDocumentKey,
  WriteOutcome,
} from '../backends/types.js';
import type { ChunkableDocument } from '../chunking/chunker.js';
import { chunkDocument } from '../chunking/chunker.js';
import { decideDelete, decideUpsert } from '../storage/versioning.js';
import type { Embedder } from '../vector/embedder.js';
import { embeddingText } from '../vector/embedder.js';
import type { ConsistencyReport } from './consistency.js';
import { compareChunkCounts } from './consistency.js';

export interface IndexerDependencies {
  lexical: LexicalBackend;
  vector: VectorBackend;
  embedder: Embedder;
  /** Splits a document into chunks (default `chunkDocument` with its default sizes). */
  chunk?: (doc: ChunkableDocument) => IndexedChunk[];
  /** Texts per embedding call (default 64). */
  embedBatchSize?: number;
}

export interface IndexResult {
  op: 'upsert' | 'delete';
  doc: VersionedDocumentKey;
  lexical: WriteOutcome;
  vector: WriteOutcome;
  /** Chunks written by this command (0 for a delete or a no-op). */
  chunks: number;
  /** True when either side changed: the kb's answer caches are now stale. */
  changed: boolean;
}

export interface Indexer {
  /**
   * Applies one ingest command to both indexes, idempotently: redelivery of the same version
   * is a no-op, an older version never overwrites a newer one, and a command that failed on
   * one side completes that side alone when it is delivered again.
   */
  apply(command: IngestCommand__Output, signal?: AbortSignal): Promise<IndexResult>;
  /** Compares the chunk counts of the two sides per knowledge base. */
  checkConsistency(signal?: AbortSignal): Promise<ConsistencyReport>;
}

export function createIndexer(dependencies: IndexerDependencies): Indexer {
  const { lexical, vector, embedder } = dependencies;
  const chunk = dependencies.chunk ?? ((doc: ChunkableDocument) => chunkDocument(doc));
  const batchSize = dependencies.embedBatchSize ?? 64;

  async function embedChunks(chunks: readonly IndexedChunk[], signal: AbortSignal): Promise<EmbeddedChunk[]> {
    const embedded: EmbeddedChunk[] = [];
    for (let start = 0; start < chunks.length; start += batchSize) {
      const batch = chunks.slice(start, start + batchSize);
      const vectors = await embedder.embed(
        batch.map((c) => embeddingText(c.title, c.text)),
        signal,
      );
      if (vectors.length !== batch.length) {
        throw new Error(`embedder ${embedder.model} returned ${vectors.length} vectors for ${batch.length} texts`);
      }
      batch.forEach((c, i) => embedded.push({ chunk: c, vector: vectors[i] as Float32Array }));
    }
    return embedded;
  }

  async function upsert(document: Document__Output, signal: AbortSignal): Promise<IndexResult> {
    const doc = validDocumentKey(document, 'document');
    const [lexicalState, vectorState] = await Promise.all([
      lexical.documentState(doc, signal),
      vector.documentState(doc, signal),
    ]);
    let lexicalOutcome = decideUpsert(lexicalState, doc.version);
    let vectorOutcome = decideUpsert(vectorState, doc.version);
    if (lexicalOutcome !== 'applied' && vectorOutcome !== 'applied') {
      return { op: 'upsert', doc, lexical: lexicalOutcome, vector: vectorOutcome, chunks: 0, changed: false };
    }
    const chunks = chunk({
      tenantId: doc.tenantId,
      kbId: doc.kbId,
      docId: doc.docId,
      version: doc.version,
      title: document.title,
      text: document.text,
      effectiveDate: document.effectiveDate,
      sourceUri: document.sourceUri,
      sections: document.layout?.sections ?? [],
    });
    const embedded = vectorOutcome === 'applied' ? await embedChunks(chunks, signal) : [];
    signal.throwIfAborted();
    [lexicalOutcome, vectorOutcome] = await Promise.all([
      lexicalOutcome === 'applied' ? lexical.upsertDocument(doc, chunks, signal) : lexicalOutcome,
      vectorOutcome === 'applied' ? vector.upsertDocument(doc, embedded, signal) : vectorOutcome,
    ]);
    const changed = lexicalOutcome === 'applied' || vectorOutcome === 'applied';
    return {
      op: 'upsert',
      doc,
      lexical: lexicalOutcome,
      vector: vectorOutcome,
      chunks: changed ? chunks.length : 0,
      changed,
    };
  }

  async function remove(ref: DocumentRef__Output, signal: AbortSignal): Promise<IndexResult> {
    const doc = validDocumentKey(ref, 'document reference');
    const [lexicalState, vectorState] = await Promise.all([
      lexical.documentState(doc, signal),
      vector.documentState(doc, signal),
    ]);
    const [lexicalOutcome, vectorOutcome] = await Promise.all([
      decideDelete(lexicalState, doc.version) === 'applied'
        ? lexical.deleteDocument(doc, signal)
        : decideDelete(lexicalState, doc.version),
      decideDelete(vectorState, doc.version) === 'applied'
        ? vector.deleteDocument(doc, signal)
        : decideDelete(vectorState, doc.version),
    ]);
    const changed = lexicalOutcome === 'applied' || vectorOutcome === 'applied';
    return { op: 'delete', doc, lexical: lexicalOutcome, vector: vectorOutcome, chunks: 0, changed };
  }

  return {
    apply(command, signal = new AbortController().signal) {
      if (command.op === 'upsert' && command.upsert) return upsert(command.upsert, signal);
      if (command.op === 'delete' && command.delete) return remove(command.delete, signal);
      return Promise.reject(new ValidationError('ingest command carries neither an upsert nor a delete'));
    },
    async checkConsistency(signal) {
      const [lexicalCounts, vectorCounts] = await Promise.all([
        lexical.countChunks(signal),
        vector.countChunks(signal),
      ]);
      return compareChunkCounts(
        { name: lexical.name, counts: lexicalCounts },
        { name: vector.name, counts: vectorCounts },
      );
    },
  };
}

function validDocumentKey(
  doc: { tenantId: string; kbId: string; docId: string } & ({ version: number } | { version?: number }),
  what: string,
): VersionedDocumentKey {
  if (!doc.tenantId) throw new ValidationError(`${what} has no tenant id`);
  if (!doc.kbId) throw new ValidationError(`${what} has no knowledge base id`);
  if (!doc.docId) throw new ValidationError(`${what} has no document id`);
  const version = doc.version ?? 0;
  if (!Number.isSafeInteger(version) || version < 1) {
    throw new ValidationError(`${what} ${doc.docId} has version ${version}; versions are integers from 1`);
  }
  if (versionAheadOfClock(version)) {
    throw new ValidationError(
      `${what} ${doc.docId} has version ${version}, ahead of the clock (${Date.now()} ms since the epoch): ` +
        'it would outrank every later ingest and delete of the document',
    );
  }
  return { tenantId: doc.tenantId, kbId: doc.kbId, docId: doc.docId, version };
}
