import type { RowData } from '@zilliz/milvus2-sdk-node';
import { ConsistencyLevelEnum, MilvusClient } from '@zilliz/milvus2-sdk-node';
import { HoplineError, ValidationError } from '@hopline/contracts';
import { z } from 'zod';
import { assertScope } from '../scope.js';
import type {
  DocumentKey,
  DocumentState,
  DocumentWrite,
  EmbeddedChunk,
  IndexedChunk,
  KbChunkCount,
  ScoredChunk,
  VectorBackend,
  VectorSearchRequest,
  VersionedDocumentKey,
  WriteOutcome,
  WriteResult,
} from '../types.js';
import { decideDelete, decideUpsert } from '../../storage/versioning.js';
import type { HnswParameters, MilvusSetupLog } from './collections.js';
import {
  DEFAULT_MILVUS_HNSW,
  RECORD_PLACEHOLDER,
  VARCHAR_LIMITS,
  chunkCollectionFields,
  documentCollectionFields,
  ensureCollection,
} from './collections.js';
import { checkStatus, milvusError } from './errors.js';
import type { MilvusFilter } from './filters.js';
import {
  LIVE_RECORDS,
  documentFilter,
  documentsFilter,
  kbFilter,
  keysFilter,
  olderVersionsFilter,
  pageAfter,
  scopeFilter,
} from './filters.js';

export interface MilvusVectorBackendOptions {
  /** `host:port` of the Milvus proxy, e.g. `127.0.0.1:19530`. */
  address: string;
  /** `user:password` or an API key, when the server has authentication on. */
  token?: string;
  database?: string;
  /** Collection holding the chunk vectors (default `hopline_chunks`). */
  collection?: string;
  /** Collection holding the document version records (default `<collection>_documents`). */
  documentsCollection?: string;
  /** Vector length; an existing collection of another length fails start-up. */
  dimensions: number;
  hnsw?: Partial<HnswParameters>;
  /** Per-RPC deadline (default 10 s); the caller's signal still applies. */
  requestTimeoutMs?: number;
  /** How long start-up waits for the collections to load (default 60 s). */
  loadTimeoutMs?: number;
  /** Most rows in one upsert request of a batch write (default 256); a larger batch is split. */
  upsertBatchSize?: number;
  log?: MilvusSetupLog;
}

export const DEFAULT_MILVUS_COLLECTION = 'hopline_chunks';

export const DEFAULT_MILVUS_UPSERT_BATCH = 256;
/** Milvus answers at most this many rows per query; a delete by key names at most as many. */
const QUERY_LIMIT = 16_384;
const COUNT = 'count(*)';

const chunkPayloadSchema = z.object({
  title: z.string(),
  text: z.string(),
  span: z.object({ start: z.number().int().nonnegative(), end: z.number().int().nonnegative() }),
  dedupeKey: z.string().min(1),
  effectiveDate: z.string(),
  sourceUri: z.string(),
});
type ChunkPayload = z.infer<typeof chunkPayloadSchema>;

const searchHitSchema = z.object({
  score: z.number(),
  chunk_id: z.string().min(1),
  tenant_id: z.string().min(1),
  kb_id: z.string().min(1),
  doc_id: z.string().min(1),
  // The SDK hands Int64 back as a string.
  doc_version: z.coerce.number().int().nonnegative(),
  chunk: chunkPayloadSchema,
});

const recordRowSchema = z.object({
  pk: z.string(),
  doc_id: z.string(),
  doc_version: z.coerce.number().int().nonnegative(),
  deleted: z.boolean(),
  chunks: z.coerce.number().int().nonnegative(),
});
type RecordRow = z.infer<typeof recordRowSchema>;

const RECORD_OUTPUT = ['pk', 'doc_id', 'doc_version', 'deleted', 'chunks'];

const chunkVersionRowSchema = z.object({
  pk: z.string(),
  doc_id: z.string(),
  doc_version: z.coerce.number().int().nonnegative(),
});

const kbRowSchema = z.object({ pk: z.string(), tenant_id: z.string(), kb_id: z.string() });
const countRowSchema = z.object({ [COUNT]: z.coerce.number().int().nonnegative() });

const SEARCH_OUTPUT = ['chunk_id', 'tenant_id', 'kb_id', 'doc_id', 'doc_version', 'chunk'];

/**
 * Vectors on Milvus: HNSW (M 16, efConstruction 200) under COSINE, searched with ef 64 inside
 * the caller's tenant partition and kb ids.
 *
 * Milvus has no conditional writes, so versions are kept as rows: each chunk row's key carries
 * its document version (a write never overwrites another version's rows), and each write adds
 * a record row (version, deleted) to the documents collection; the newest record is the
 * document's state (`storage/versioning.ts` order: a delete at v beats version v). A writer
 * reads the records back after adding its own: if a newer one is there it removes its rows, and
 * if anything else appeared meanwhile it removes what is now older — so two workers applying
 * different versions at once still end with only the newest version's chunks.
 *
 * A first version replaces nothing, so it looks for no older rows; that leaves the rows of a
 * write that landed them but never its record (the record upsert failed, the worker died) when
 * a newer version is applied before that write's redelivery. The redelivery is then 'stale',
 * and a stale upsert removes the document's rows older than the newest record: the leftovers
 * are there, and the recorded version's own rows (or newer ones) are not touched.
 */
export class MilvusVectorBackend implements VectorBackend {
  readonly name = 'milvus';

  constructor(
    private readonly client: MilvusClient,
    readonly dimensions: number,
    private readonly collection: string,
    private readonly documents: string,
    private readonly ef: number,
    private readonly upsertBatchSize = DEFAULT_MILVUS_UPSERT_BATCH,
  ) {}

  async search(request: VectorSearchRequest, signal: AbortSignal): Promise<ScoredChunk[]> {
    assertScope(request.scope);
    this.checkDimensions(request.vector.length, 'query vector');
    const response = await this.call('searching', signal, () =>
      this.client.search({
        collection_name: this.collection,
        anns_field: 'vector',
        data: Array.from(request.vector),
        limit: request.limit,
        metric_type: 'COSINE',
        // HNSW needs ef ≥ the number of results asked for.
        params: { ef: Math.max(this.ef, request.limit) },
        output_fields: SEARCH_OUTPUT,
        ...scopeFilter(request.scope),
      }),
    );
    checkStatus(response.status, 'searching');
    return (response.results as unknown[]).map((hit) => toScoredChunk(hit));
  }

  /** A batch of one: the same path as the ingest stream's batches. */
  upsertDocument(
    doc: VersionedDocumentKey,
    items: readonly EmbeddedChunk[],
    signal?: AbortSignal,
  ): Promise<WriteOutcome> {
    return this.writeOne({ op: 'upsert', doc, items }, signal);
  }

  deleteDocument(ref: VersionedDocumentKey, signal?: AbortSignal): Promise<WriteOutcome> {
    return this.writeOne({ op: 'delete', doc: ref }, signal);
  }

  /**
   * The bulk path, per round: one query of the version records per kb (`doc_id in [...]`), one
   * query of the chunk keys per kb when versions are replaced or deleted, the chunks of every
   * applied upsert in upserts of `upsertBatchSize` rows, one delete by primary key of the
   * replaced chunks, one upsert of the records, and one query per kb reading the records back to
   * settle races. A stale upsert joins the chunk-key query (one per kb, shared with the replaced
   * versions) and, only when rows older than the record it lost to are found, the delete. A
   * document written twice in a batch waits for the next round, so its second write is decided
   * against its first, as one call each would be.
   */
  async writeDocuments(writes: readonly DocumentWrite<EmbeddedChunk>[], signal?: AbortSignal): Promise<WriteResult[]> {
    const results = new Array<WriteResult>(writes.length);
    let pending = writes.map((write, at) => ({ write, at }));
    while (pending.length > 0) {
      const seen = new Set<string>();
      const round: Array<{ write: DocumentWrite<EmbeddedChunk>; at: number }> = [];
      const later: typeof round = [];
      for (const entry of pending) {
        const key = documentId(entry.write.doc);
        (seen.has(key) ? later : round).push(entry);
        seen.add(key);
      }
      await this.writeRound(round, results, signal);
      pending = later;
    }
    return results;
  }

  async documentState(key: DocumentKey, signal?: AbortSignal): Promise<DocumentState | undefined> {
    return stateOf(newest(await this.records(key, signal)));
  }

  /** One query of the version records per kb. */
  async documentStates(keys: readonly DocumentKey[], signal?: AbortSignal): Promise<Array<DocumentState | undefined>> {
    const records = await this.recordsOf(keys, signal);
    return keys.map((key) => stateOf(newest(records.get(documentId(key)) ?? [])));
  }

  async countChunks(signal?: AbortSignal): Promise<KbChunkCount[]> {
    const kbs = new Map<string, { tenantId: string; kbId: string; documents: number }>();
    const live = await this.queryAll(
      this.documents,
      LIVE_RECORDS,
      kbRowSchema,
      ['pk', 'tenant_id', 'kb_id'],
      'listing knowledge bases',
      signal,
    );
    // One live record per document.
    for (const row of live) {
      const key = JSON.stringify([row.tenant_id, row.kb_id]);
      const kb = kbs.get(key) ?? { tenantId: row.tenant_id, kbId: row.kb_id, documents: 0 };
      kb.documents += 1;
      kbs.set(key, kb);
    }
    const counts: KbChunkCount[] = [];
    for (const kb of kbs.values()) {
      const [row] = await this.query(
        this.collection,
        kbFilter(kb.tenantId, kb.kbId),
        [COUNT],
        undefined,
        `counting vectors of ${kb.kbId}`,
        signal,
      );
      counts.push({ ...kb, chunks: parse(countRowSchema, row, 'count')[COUNT] });
    }
    return counts;
  }

  async close(): Promise<void> {
    await this.client.closeConnection();
  }

  private async writeOne(write: DocumentWrite<EmbeddedChunk>, signal?: AbortSignal): Promise<WriteOutcome> {
    const [result] = await this.writeDocuments([write], signal);
    if (result instanceof Error) throw result;
    return result as WriteOutcome;
  }

  /** One round of a batch: each document at most once. Results land in `results` by position. */
  private async writeRound(
    round: ReadonlyArray<{ write: DocumentWrite<EmbeddedChunk>; at: number }>,
    results: WriteResult[],
    signal?: AbortSignal,
  ): Promise<void> {
    const valid: BatchEntry[] = [];
    for (const { write, at } of round) {
      try {
        checkDocument(write.doc);
        const rows = write.op === 'upsert' ? write.items.map((item) => this.chunkRow(write.doc, item)) : [];
        valid.push({ write, at, rows, before: [] });
      } catch (error) {
        results[at] = error as Error;
      }
    }
    const before = await this.recordsOf(
      valid.map(({ write }) => write.doc),
      signal,
    );
    // Stale upserts, with the record they lost to: each may be the redelivery of a write whose
    // rows landed without their record, which the newer version recorded since took for none and
    // did not clean up (a first version replaces nothing). Only rows older than that record go:
    // never the recorded version's, nor a newer writer's still on its way (row keys carry their
    // version, and a record never moves back). 'unchanged' needs nothing: its record was added
    // after all its rows landed and what they replaced went.
    const stale: Array<{ entry: BatchEntry; state: VersionState }> = [];
    let applying = valid.filter((entry) => {
      entry.before = before.get(documentId(entry.write.doc)) ?? [];
      const state = stateOf(newest(entry.before));
      const decide = entry.write.op === 'upsert' ? decideUpsert : decideDelete;
      const outcome = decide(state, entry.write.doc.version);
      if (outcome !== 'applied') results[entry.at] = outcome;
      if (outcome === 'stale' && entry.write.op === 'upsert' && state)
        stale.push({ entry, state: { version: state.version, deleted: state.deleted } });
      return outcome === 'applied';
    });
    // A first version replaces nothing; a delete clears up to its version whatever was recorded.
    const replaced = await this.replacedChunks(
      [
        ...applying
          .filter((entry) => entry.before.length > 0 || entry.write.op === 'delete')
          .map((entry) => ({
            entry,
            state: { version: entry.write.doc.version, deleted: entry.write.op === 'delete' },
          })),
        ...stale,
      ],
      signal,
    );
    await this.upsertOwned(
      this.collection,
      applying.map((entry) => ({ entry, rows: entry.rows })),
      'writing vectors',
      results,
      signal,
    );
    applying = applying.filter(({ at }) => results[at] === undefined);
    // Before the records: once a record is there, a redelivery is a no-op and would never clean up.
    // A failure throws: the whole batch, stale upserts included, is redelivered and tried again.
    await this.deleteKeys(
      this.collection,
      [...applying, ...stale.map(({ entry }) => entry)].flatMap((entry) => replaced.get(entry) ?? []),
      'removing replaced vectors',
      signal,
    );
    await this.upsertOwned(
      this.documents,
      applying.map((entry) => ({ entry, rows: [recordRow(entry)] })),
      'recording document versions',
      results,
      signal,
    );
    await this.settle(
      applying.filter(({ at }) => results[at] === undefined),
      results,
      signal,
    );
  }

  /**
   * Reads the records back after adding this round's: the newest record decides each outcome,
   * a write that lost (or saw another write land meanwhile) removes what is now older than the
   * winner, and records older than the winner go.
   */
  private async settle(entries: readonly BatchEntry[], results: WriteResult[], signal?: AbortSignal): Promise<void> {
    if (entries.length === 0) return;
    const after = await this.recordsOf(
      entries.map(({ write }) => write.doc),
      signal,
    );
    const superseded: string[] = [];
    const raced: Array<{ doc: VersionedDocumentKey; winner: RecordRow }> = [];
    for (const entry of entries) {
      const { doc } = entry.write;
      const own = recordRow(entry);
      const rows = after.get(documentId(doc)) ?? [];
      const winner = newest(rows) ?? parse(recordRowSchema, own, 'document record');
      if (
        winner.pk !== own.pk ||
        rows.some((row) => row.pk !== own.pk && !entry.before.some((seen) => seen.pk === row.pk))
      )
        raced.push({ doc, winner });
      for (const row of rows) if (row.pk !== winner.pk && isOlder(row, winner)) superseded.push(row.pk);
      const decide = entry.write.op === 'upsert' ? decideUpsert : decideDelete;
      results[entry.at] = winner.pk === own.pk ? 'applied' : decide(stateOf(winner), doc.version);
    }
    for (const { doc, winner } of raced)
      await this.deleteWhere(
        this.collection,
        olderVersionsFilter(doc, winner.doc_version, winner.deleted),
        `removing superseded vectors of ${doc.docId}`,
        signal,
      );
    await this.deleteKeys(this.documents, superseded, 'removing superseded document records', signal);
  }

  /** The records of these documents, by `documentId`: one query (a page per 16,384 rows) per kb. */
  private async recordsOf(keys: readonly DocumentKey[], signal?: AbortSignal): Promise<Map<string, RecordRow[]>> {
    const records = new Map<string, RecordRow[]>();
    for (const [{ tenantId, kbId }, docIds] of byKb(keys)) {
      const rows = await this.queryAll(
        this.documents,
        documentsFilter(tenantId, kbId, docIds),
        recordRowSchema,
        RECORD_OUTPUT,
        `reading the records of ${docIds.length} documents in ${kbId}`,
        signal,
      );
      for (const row of rows) {
        const key = documentId({ tenantId, kbId, docId: row.doc_id });
        records.set(key, [...(records.get(key) ?? []), row]);
      }
    }
    return records;
  }

  /**
   * The keys of the chunk rows older than each write's state: older versions, or up to a
   * delete's own (for a stale upsert, the state of the record it lost to).
   */
  private async replacedChunks(
    entries: ReadonlyArray<{ entry: BatchEntry; state: VersionState }>,
    signal?: AbortSignal,
  ): Promise<Map<BatchEntry, string[]>> {
    const replaced = new Map<BatchEntry, string[]>();
    for (const [{ tenantId, kbId }, docIds] of byKb(entries.map(({ entry }) => entry.write.doc))) {
      const writes = new Map(
        entries
          .filter(({ entry }) => entry.write.doc.tenantId === tenantId && entry.write.doc.kbId === kbId)
          .map((owned) => [owned.entry.write.doc.docId, owned]),
      );
      const rows = await this.queryAll(
        this.collection,
        documentsFilter(tenantId, kbId, docIds),
        chunkVersionRowSchema,
        ['pk', 'doc_id', 'doc_version'],
        `reading the vector keys of ${docIds.length} documents in ${kbId}`,
        signal,
      );
      for (const row of rows) {
        const owned = writes.get(row.doc_id);
        if (!owned) continue;
        const { entry, state } = owned;
        if (row.doc_version < state.version || (state.deleted && row.doc_version === state.version))
          replaced.set(entry, [...(replaced.get(entry) ?? []), row.pk]);
      }
    }
    return replaced;
  }

  /**
   * Upserts the rows in requests of `upsertBatchSize`. Milvus refuses a request as a whole: when
   * it refuses one as invalid, each document's rows in it are sent alone, so only the document
   * at fault fails (its error in `results`); any other failure throws.
   */
  private async upsertOwned(
    collection: string,
    owned: ReadonlyArray<{ entry: BatchEntry; rows: readonly RowData[] }>,
    what: string,
    results: WriteResult[],
    signal?: AbortSignal,
  ): Promise<void> {
    const rows = owned.flatMap(({ entry, rows: its }) => its.map((row) => ({ entry, row })));
    for (let start = 0; start < rows.length; start += this.upsertBatchSize) {
      const part = rows
        .slice(start, start + this.upsertBatchSize)
        .filter(({ entry }) => results[entry.at] === undefined);
      if (part.length === 0) continue;
      const owners = [...new Set(part.map(({ entry }) => entry))];
      try {
        await this.upsert(
          collection,
          part.map(({ row }) => row),
          owners.length === 1 ? `${what} of ${owners[0]?.write.doc.docId}` : `${what} of ${owners.length} documents`,
          signal,
        );
      } catch (error) {
        if (!(error instanceof ValidationError)) throw error;
        if (owners.length === 1) {
          results[(owners[0] as BatchEntry).at] = error;
          continue;
        }
        for (const owner of owners) {
          try {
            await this.upsert(
              collection,
              part.filter(({ entry }) => entry === owner).map(({ row }) => row),
              `${what} of ${owner.write.doc.docId}`,
              signal,
            );
          } catch (alone) {
            if (!(alone instanceof ValidationError)) throw alone;
            results[owner.at] = alone;
          }
        }
      }
    }
  }

  /** Every row of `filter`, a page of 16,384 at a time in primary-key order. */
  private async queryAll<Row extends { pk: string }>(
    collection: string,
    filter: MilvusFilter,
    schema: z.ZodType<Row>,
    outputFields: string[],
    what: string,
    signal?: AbortSignal,
  ): Promise<Row[]> {
    const rows: Row[] = [];
    for (let after = ''; ;) {
      const page = await this.query(collection, pageAfter(filter, after), outputFields, QUERY_LIMIT, what, signal);
      const parsed = page.map((row) => parse(schema, row, what));
      rows.push(...parsed);
      if (parsed.length < QUERY_LIMIT) return rows;
      // Query pages come back in primary-key order, so the last key starts the next page.
      after = parsed.reduce((max, row) => (row.pk > max ? row.pk : max), after);
    }
  }

  private async deleteKeys(
    collection: string,
    keys: readonly string[],
    what: string,
    signal?: AbortSignal,
  ): Promise<void> {
    for (let start = 0; start < keys.length; start += QUERY_LIMIT)
      await this.deleteWhere(collection, keysFilter(keys.slice(start, start + QUERY_LIMIT)), what, signal);
  }

  private async records(key: DocumentKey, signal?: AbortSignal): Promise<RecordRow[]> {
    const rows = await this.query(
      this.documents,
      documentFilter(key),
      RECORD_OUTPUT,
      QUERY_LIMIT,
      `reading the records of ${key.docId}`,
      signal,
    );
    return rows.map((row) => parse(recordRowSchema, row, 'document record'));
  }

  private chunkRow(doc: VersionedDocumentKey, { chunk, vector }: EmbeddedChunk): RowData {
    if (
      chunk.tenantId !== doc.tenantId ||
      chunk.kbId !== doc.kbId ||
      chunk.docId !== doc.docId ||
      chunk.docVersion !== doc.version
    ) {
      throw new ValidationError(
        `chunk ${chunk.chunkId} does not belong to ${doc.tenantId}/${doc.kbId}/${doc.docId} version ${doc.version}`,
      );
    }
    this.checkDimensions(vector.length, `chunk ${chunk.chunkId}`);
    checkLength(chunk.chunkId, VARCHAR_LIMITS.id, 'chunk id');
    const payload: ChunkPayload = {
      title: chunk.title,
      text: chunk.text,
      span: { start: chunk.span.start, end: chunk.span.end },
      dedupeKey: chunk.dedupeKey,
      effectiveDate: chunk.effectiveDate,
      sourceUri: chunk.sourceUri,
    };
    return {
      pk: chunkKey(chunk),
      chunk_id: chunk.chunkId,
      tenant_id: chunk.tenantId,
      kb_id: chunk.kbId,
      doc_id: chunk.docId,
      doc_version: chunk.docVersion,
      chunk: payload,
      vector: Array.from(vector),
    };
  }

  private checkDimensions(length: number, what: string): void {
    if (length !== this.dimensions)
      throw new ValidationError(`${what} has ${length} dimensions, the Milvus collection holds ${this.dimensions}`);
  }

  private async upsert(collection: string, data: RowData[], what: string, signal?: AbortSignal): Promise<void> {
    const response = await this.call(what, signal, () => this.client.upsert({ collection_name: collection, data }));
    checkStatus(response.status, what);
  }

  private async deleteWhere(
    collection: string,
    filter: MilvusFilter,
    what: string,
    signal?: AbortSignal,
  ): Promise<void> {
    const response = await this.call(what, signal, () =>
      this.client.deleteEntities({ collection_name: collection, ...filter }),
    );
    checkStatus(response.status, what);
  }

  /** Reads at Strong consistency: a write's own records must be visible to its check. */
  private async query(
    collection: string,
    filter: MilvusFilter,
    outputFields: string[],
    limit: number | undefined,
    what: string,
    signal?: AbortSignal,
  ): Promise<unknown[]> {
    const response = await this.call(what, signal, () =>
      this.client.query({
        collection_name: collection,
        output_fields: outputFields,
        consistency_level: ConsistencyLevelEnum.Strong,
        ...(limit ? { limit } : {}),
        ...filter,
      }),
    );
    checkStatus(response.status, what);
    return response.data;
  }

  /** The SDK takes no AbortSignal: an aborted call is abandoned and ends at its own RPC deadline. */
  private async call<T>(what: string, signal: AbortSignal | undefined, request: () => Promise<T>): Promise<T> {
    try {
      signal?.throwIfAborted();
      if (!signal) return await request();
      return await new Promise<T>((resolve, reject) => {
        const onAbort = (): void => reject(signal.reason);
        signal.addEventListener('abort', onAbort, { once: true });
        request()
          .then(resolve, reject)
          .finally(() => signal.removeEventListener('abort', onAbort));
      });
    } catch (error) {
      throw milvusError(error, what, signal);
    }
  }
}

/**
 * Connects, then creates (or checks) the chunks collection — tenant partition key, HNSW,
 * COSINE — and the document records collection, and loads both.
 */
export async function createMilvusVectorBackend(options: MilvusVectorBackendOptions): Promise<MilvusVectorBackend> {
  if (!Number.isInteger(options.dimensions) || options.dimensions < 1)
    throw new ValidationError(`milvus: dimensions must be a positive integer, got ${options.dimensions}`);
  const upsertBatchSize = options.upsertBatchSize ?? DEFAULT_MILVUS_UPSERT_BATCH;
  if (!Number.isInteger(upsertBatchSize) || upsertBatchSize < 1)
    throw new ValidationError(`milvus: upsertBatchSize must be a positive integer, got ${upsertBatchSize}`);
  const log = options.log ?? { info() {}, warn() {} };
  const hnsw = { ...DEFAULT_MILVUS_HNSW, ...options.hnsw };
  const collection = options.collection ?? DEFAULT_MILVUS_COLLECTION;
  const documents = options.documentsCollection ?? `${collection}_documents`;
  const client = new MilvusClient({
    address: options.address,
    ...(options.token ? { token: options.token } : {}),
    ...(options.database ? { database: options.database } : {}),
    timeout: options.requestTimeoutMs ?? 10_000,
    // Retries are the caller's guard's to decide; the SDK's own also resend a unary call
    // without half-closing it, so a server that answers UNAVAILABLE hangs it to its deadline.
    maxRetries: 0,
    // The SDK's winston logger writes colour lines to the console; only its errors are worth it.
    logLevel: 'error',
    __SKIP_CONNECT__: true,
  });
  try {
    client.connect(MilvusClient.sdkInfo.version);
    await client.connectPromise.catch((error: unknown) => {
      throw milvusError(error, `connecting to Milvus at ${options.address}`);
    });
    const loadTimeoutMs = options.loadTimeoutMs ?? 60_000;
    await ensureCollection(
      client,
      {
        name: collection,
        fields: chunkCollectionFields(options.dimensions),
        vectorField: 'vector',
        dimensions: options.dimensions,
        index: {
          index_type: 'HNSW',
          metric_type: 'COSINE',
          params: { M: hnsw.M, efConstruction: hnsw.efConstruction },
        },
      },
      log,
      loadTimeoutMs,
    );
    await ensureCollection(
      client,
      {
        name: documents,
        fields: documentCollectionFields(),
        vectorField: 'placeholder',
        dimensions: RECORD_PLACEHOLDER.length,
        index: { index_type: 'FLAT', metric_type: 'L2', params: {} },
      },
      log,
      loadTimeoutMs,
    );
    log.info('milvus: collections ready', { collection, documents, dimensions: options.dimensions, hnsw });
    return new MilvusVectorBackend(client, options.dimensions, collection, documents, hnsw.ef, upsertBatchSize);
  } catch (error) {
    await client.closeConnection();
    throw error;
  }
}

/** A chunk version's row key: chunk ids are unique within a kb, and each version has its own row. */
export function chunkKey(chunk: Pick<IndexedChunk, 'tenantId' | 'kbId' | 'chunkId' | 'docVersion'>): string {
  const key = `${[chunk.tenantId, chunk.kbId, chunk.chunkId].map(encodeURIComponent).join('/')}@${chunk.docVersion}`;
  checkLength(key, VARCHAR_LIMITS.pk, 'chunk key');
  return key;
}

export function recordKey(doc: VersionedDocumentKey, deleted: boolean): string {
  const key = `${[doc.tenantId, doc.kbId, doc.docId].map(encodeURIComponent).join('/')}@${doc.version}${deleted ? ':deleted' : ''}`;
  checkLength(key, VARCHAR_LIMITS.pk, 'document record key');
  return key;
}

/** A document state that rows are older than: a version, or a delete at it. */
interface VersionState {
  version: number;
  deleted: boolean;
}

/** One write of a batch round: its place in the results, its chunk rows, the records it found. */
interface BatchEntry {
  write: DocumentWrite<EmbeddedChunk>;
  at: number;
  rows: RowData[];
  before: RecordRow[];
}

function documentId(key: DocumentKey): string {
  return JSON.stringify([key.tenantId, key.kbId, key.docId]);
}

/** The documents' ids grouped by kb, in first-seen order. */
function byKb(keys: readonly DocumentKey[]): Array<[{ tenantId: string; kbId: string }, string[]]> {
  const kbs = new Map<string, [{ tenantId: string; kbId: string }, string[]]>();
  for (const { tenantId, kbId, docId } of keys) {
    const key = JSON.stringify([tenantId, kbId]);
    const kb = kbs.get(key) ?? [{ tenantId, kbId }, []];
    kb[1].push(docId);
    kbs.set(key, kb);
  }
  return [...kbs.values()];
}

/** The record a write adds: its version, whether it is a delete, and how many chunks it wrote. */
function recordRow({ write, rows }: BatchEntry): RowData & { pk: string } {
  const { doc } = write;
  const deleted = write.op === 'delete';
  return {
    pk: recordKey(doc, deleted),
    tenant_id: doc.tenantId,
    kb_id: doc.kbId,
    doc_id: doc.docId,
    doc_version: doc.version,
    deleted,
    chunks: rows.length,
    placeholder: RECORD_PLACEHOLDER,
  };
}

/** Whether `row` is older than `winner` by the version rules (a delete at v outranks version v). */
function isOlder(row: RecordRow, winner: RecordRow): boolean {
  return row.doc_version < winner.doc_version || (winner.deleted && row.doc_version === winner.doc_version);
}

/** The newest record by the version rules: a higher version, or a delete at the same one. */
function newest(rows: readonly RecordRow[]): RecordRow | undefined {
  let best: RecordRow | undefined;
  for (const row of rows) {
    if (
      !best ||
      row.doc_version > best.doc_version ||
      (row.doc_version === best.doc_version && row.deleted && !best.deleted)
    )
      best = row;
  }
  return best;
}

function stateOf(row: RecordRow | undefined): DocumentState | undefined {
  return row && { version: row.doc_version, deleted: row.deleted, chunks: row.chunks };
}

function toScoredChunk(hit: unknown): ScoredChunk {
  const row = parse(searchHitSchema, hit, 'search hit');
  return {
    score: row.score,
    chunk: {
      chunkId: row.chunk_id,
      tenantId: row.tenant_id,
      kbId: row.kb_id,
      docId: row.doc_id,
      docVersion: row.doc_version,
      ...row.chunk,
    },
  };
}

function checkDocument(doc: VersionedDocumentKey): void {
  if (!Number.isSafeInteger(doc.version) || doc.version < 0)
    throw new ValidationError(`document version ${doc.version} is not a non-negative integer`);
  checkLength(doc.tenantId, VARCHAR_LIMITS.id, 'tenant id');
  checkLength(doc.kbId, VARCHAR_LIMITS.id, 'kb id');
  checkLength(doc.docId, VARCHAR_LIMITS.id, 'doc id');
}

function checkLength(value: string, maxBytes: number, what: string): void {
  if (Buffer.byteLength(value) > maxBytes)
    throw new ValidationError(`${what} is longer than the ${maxBytes} bytes Milvus stores`);
}

function parse<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success)
    throw new HoplineError('internal', `milvus returned a malformed ${what}: ${parsed.error.message}`);
  return parsed.data;
}
