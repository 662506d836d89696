import type { Document__Output, IngestCommand__Output } from '@hopline/contracts';
import { ValidationError, versionAheadOfClock } from '@hopline/contracts';
import type {
  DocumentState,
  DocumentWrite,
  EmbeddedChunk,
  IndexedChunk,
  LexicalBackend,
  StoredDocument,
  VectorBackend,
  VersionedDocumentKey,
  WriteOutcome,
  WriteResult,
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

/** How one command of a batch ended: its result, or why it could not be applied. */
export type IndexAttempt = { ok: true; result: IndexResult } | { ok: false; error: unknown };

export interface Indexer {
  /**
   * Applies one ingest command to both indexes, idempotently: redelivery of the same version
   * is a no-op, an older version never overwrites a newer one, and a command that failed on
   * one side completes that side alone when it is delivered again.
   */
  apply(command: IngestCommand__Output, signal?: AbortSignal): Promise<IndexResult>;
  /**
   * Applies commands in order as one batch, with the same rules and results as `apply` one at
   * a time: the chunks of all of them are embedded together and each index takes the batch as
   * one write (one log flush embedded, fewer round trips remote). A command that is invalid
   * fails alone; a failed write fails the commands that wrote to it.
   */
  applyAll(commands: readonly IngestCommand__Output[], signal?: AbortSignal): Promise<IndexAttempt[]>;
  /** Compares the chunk counts of the two sides per knowledge base. */
  checkConsistency(signal?: AbortSignal): Promise<ConsistencyReport>;
  /**
   * Closes the gaps of a report where both sides can list their documents (`readDocuments`):
   * each document goes to the side whose version of it is behind, from the side that is ahead
   * (its chunks, embedded again for the vector side), through the usual versioned writes. The
   * report after it says what is left, all of it when a side cannot list its documents.
   */
  repair(report: ConsistencyReport, signal?: AbortSignal): Promise<{ written: number; report: ConsistencyReport }>;
}

/** One valid command of a batch, with what each side must do with it. */
interface Planned {
  at: number;
  op: 'upsert' | 'delete';
  doc: VersionedDocumentKey;
  document?: Document__Output;
  lexical: WriteOutcome;
  vector: WriteOutcome;
  chunks: IndexedChunk[];
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

  /**
   * Decides each side from the state before the batch, so that a redelivered version costs no
   * chunking or embedding. A document written twice in one batch is left to the backends,
   * which decide each write after the one before it.
   */
  async function plan(commands: readonly IngestCommand__Output[], attempts: IndexAttempt[], signal: AbortSignal) {
    const planned: Planned[] = [];
    commands.forEach((command, at) => {
      try {
        if (command.op === 'upsert' && command.upsert) {
          const doc = validDocumentKey(command.upsert, 'document');
          planned.push({
            at,
            op: 'upsert',
            doc,
            document: command.upsert,
            lexical: 'applied',
            vector: 'applied',
            chunks: [],
          });
        } else if (command.op === 'delete' && command.delete) {
          const doc = validDocumentKey(command.delete, 'document reference');
          planned.push({ at, op: 'delete', doc, lexical: 'applied', vector: 'applied', chunks: [] });
        } else throw new ValidationError('ingest command carries neither an upsert nor a delete');
      } catch (error) {
        attempts[at] = { ok: false, error };
      }
    });
    const writes = new Map<string, number>();
    for (const { doc } of planned) writes.set(documentKeyOf(doc), (writes.get(documentKeyOf(doc)) ?? 0) + 1);
    const once = planned.filter(({ doc }) => writes.get(documentKeyOf(doc)) === 1);
    const keys = once.map((step) => step.doc);
    const [lexicalStates, vectorStates] = await Promise.all([
      statesOf(lexical, keys, signal),
      statesOf(vector, keys, signal),
    ]);
    once.forEach((step, i) => {
      const decideSide = step.op === 'upsert' ? decideUpsert : decideDelete;
      step.lexical = decideSide(lexicalStates[i], step.doc.version);
      step.vector = decideSide(vectorStates[i], step.doc.version);
    });
    for (const step of planned) {
      if (step.op !== 'upsert' || !step.document || (step.lexical !== 'applied' && step.vector !== 'applied')) continue;
      const document = step.document;
      step.chunks = chunk({
        tenantId: step.doc.tenantId,
        kbId: step.doc.kbId,
        docId: step.doc.docId,
        version: step.doc.version,
        title: document.title,
        text: document.text,
        effectiveDate: document.effectiveDate,
        sourceUri: document.sourceUri,
        sections: document.layout?.sections ?? [],
      });
    }
    return planned;
  }

  /**
   * Writes both sides; the writes a backend refused one by one come back with their errors. An
   * upsert a side holds a newer state of still goes to it, without chunks: it may be the
   * redelivery of a write whose chunks landed and whose record did not, overtaken since by a
   * version that had no record to replace, and the side removes what is older than its record.
   */
  async function write(planned: readonly Planned[], signal: AbortSignal): Promise<Map<Planned, Error>> {
    const lexicalSteps = planned.filter((step) => goesTo(step, 'lexical'));
    const vectorSteps = planned.filter((step) => goesTo(step, 'vector'));
    const embedded = await embedChunks(
      vectorSteps.flatMap((step) => (step.vector === 'applied' ? step.chunks : [])),
      signal,
    );
    signal.throwIfAborted();
    let next = 0;
    const vectorWrites = vectorSteps.map((step): DocumentWrite<EmbeddedChunk> => {
      if (step.op === 'delete') return { op: 'delete', doc: step.doc };
      if (step.vector !== 'applied') return { op: 'upsert', doc: step.doc, items: [] };
      const items = embedded.slice(next, next + step.chunks.length);
      next += step.chunks.length;
      return { op: 'upsert', doc: step.doc, items };
    });
    const lexicalWrites = lexicalSteps.map((step): DocumentWrite<IndexedChunk> => {
      if (step.op === 'delete') return { op: 'delete', doc: step.doc };
      return { op: 'upsert', doc: step.doc, items: step.lexical === 'applied' ? step.chunks : [] };
    });
    const [lexicalOutcomes, vectorOutcomes] = await Promise.all([
      lexicalWrites.length > 0 ? lexical.writeDocuments(lexicalWrites, signal) : [],
      vectorWrites.length > 0 ? vector.writeDocuments(vectorWrites, signal) : [],
    ]);
    const failed = new Map<Planned, Error>();
    const settle = (steps: readonly Planned[], results: readonly WriteResult[], side: 'lexical' | 'vector'): void =>
      steps.forEach((step, i) => {
        const result = results[i] as WriteResult;
        if (result instanceof Error) failed.set(step, result);
        else step[side] = result;
      });
    settle(lexicalSteps, lexicalOutcomes, 'lexical');
    settle(vectorSteps, vectorOutcomes, 'vector');
    return failed;
  }

  async function applyAll(
    commands: readonly IngestCommand__Output[],
    signal = new AbortController().signal,
  ): Promise<IndexAttempt[]> {
    const attempts: IndexAttempt[] = new Array<IndexAttempt>(commands.length);
    const planned = await plan(commands, attempts, signal);
    const writing = planned.filter((step) => goesTo(step, 'lexical') || goesTo(step, 'vector'));
    let failure: { error: unknown } | undefined;
    let failedWrites = new Map<Planned, Error>();
    try {
      failedWrites = await write(writing, signal);
    } catch (error) {
      failure = { error };
    }
    for (const step of planned) attempts[step.at] = { ok: true, result: resultOf(step) };
    for (const [step, error] of failedWrites) attempts[step.at] = { ok: false, error };
    if (failure) for (const step of writing) attempts[step.at] = { ok: false, error: failure.error };
    return attempts;
  }

  async function checkConsistency(signal?: AbortSignal): Promise<ConsistencyReport> {
    const [lexicalCounts, vectorCounts] = await Promise.all([lexical.countChunks(signal), vector.countChunks(signal)]);
    return compareChunkCounts(
      { name: lexical.name, counts: lexicalCounts },
      { name: vector.name, counts: vectorCounts },
    );
  }

  async function repair(report: ConsistencyReport, signal = new AbortController().signal) {
    if (report.consistent || !lexical.readDocuments || !vector.readDocuments) return { written: 0, report };
    let written = 0;
    for (const { tenantId, kbId } of report.gaps) {
      const [lexicalDocs, vectorDocs] = await Promise.all([
        lexical.readDocuments(tenantId, kbId),
        vector.readDocuments(tenantId, kbId),
      ]);
      const toLexical = behind(vectorDocs, lexicalDocs).map((stored): DocumentWrite<IndexedChunk> =>
        stored.deleted
          ? { op: 'delete', doc: stored.doc }
          : { op: 'upsert', doc: stored.doc, items: stored.items.map(({ chunk }) => chunk) },
      );
      const fromLexical = behind(lexicalDocs, vectorDocs);
      const embedded = await embedChunks(
        fromLexical.flatMap((stored) => (stored.deleted ? [] : stored.items)),
        signal,
      );
      let next = 0;
      const toVector = fromLexical.map((stored): DocumentWrite<EmbeddedChunk> => {
        if (stored.deleted) return { op: 'delete', doc: stored.doc };
        const items = embedded.slice(next, next + stored.items.length);
        next += stored.items.length;
        return { op: 'upsert', doc: stored.doc, items };
      });
      await Promise.all([lexical.writeDocuments(toLexical, signal), vector.writeDocuments(toVector, signal)]);
      written += toLexical.length + toVector.length;
    }
    return { written, report: await checkConsistency(signal) };
  }

  return {
    async apply(command, signal) {
      const [attempt] = await applyAll([command], signal);
      if (!attempt?.ok) throw attempt?.error;
      return attempt.result;
    },
    applyAll,
    checkConsistency,
    repair,
  };
}

/** The states of the documents in one call where the backend has one, else one call each. */
function statesOf(
  backend: LexicalBackend | VectorBackend,
  keys: readonly VersionedDocumentKey[],
  signal: AbortSignal,
): Promise<Array<DocumentState | undefined>> {
  if (keys.length === 0) return Promise.resolve([]);
  if (backend.documentStates) return backend.documentStates(keys, signal);
  return Promise.all(keys.map((key) => backend.documentState(key, signal)));
}

/** The documents of `ahead` that `other` lacks or holds at an older state: a newer version, or live where `ahead` deleted it. */
function behind<A, B>(ahead: ReadonlyArray<StoredDocument<A>>, other: ReadonlyArray<StoredDocument<B>>) {
  const held = new Map(other.map((stored) => [stored.doc.docId, stored]));
  return ahead.filter((stored) => {
    const theirs = held.get(stored.doc.docId);
    if (!theirs) return true;
    if (stored.doc.version !== theirs.doc.version) return stored.doc.version > theirs.doc.version;
    return stored.deleted && !theirs.deleted;
  });
}

/** Whether a planned step writes to a side: where it applies, and an upsert the side holds newer (see `write`). */
function goesTo(step: Planned, side: 'lexical' | 'vector'): boolean {
  return step[side] === 'applied' || (step.op === 'upsert' && step[side] === 'stale');
}

function resultOf(step: Planned): IndexResult {
  const changed = step.lexical === 'applied' || step.vector === 'applied';
  return {
    op: step.op,
    doc: step.doc,
    lexical: step.lexical,
    vector: step.vector,
    chunks: changed && step.op === 'upsert' ? step.chunks.length : 0,
    changed,
  };
}

function documentKeyOf(doc: VersionedDocumentKey): string {
  return `${doc.tenantId}\u0000${doc.kbId}\u0000${doc.docId}`;
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
