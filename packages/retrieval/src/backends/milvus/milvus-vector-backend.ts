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
} from '../types.js';
import { decideDelete, decideUpsert } from '../../storage/versioning.js';
import { writeOneByOne } from '../write-one-by-one.js';
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
  documentFilter,
  kbFilter,
  liveRecordsAfter,
  olderRecordsFilter,
  olderVersionsFilter,
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
  log?: MilvusSetupLog;
}

export const DEFAULT_MILVUS_COLLECTION = 'hopline_chunks';

const UPSERT_BATCH = 256;
/** Milvus answers at most this many rows per query. */
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
  doc_version: z.coerce.number().int().nonnegative(),
  deleted: z.boolean(),
  chunks: z.coerce.number().int().nonnegative(),
});
type RecordRow = z.infer<typeof recordRowSchema>;

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
 */
export class MilvusVectorBackend implements VectorBackend {
  readonly name = 'milvus';

  constructor(
    private readonly client: MilvusClient,
    readonly dimensions: number,
    private readonly collection: string,
    private readonly documents: string,
    private readonly ef: number,
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

  async upsertDocument(
    doc: VersionedDocumentKey,
    items: readonly EmbeddedChunk[],
    signal?: AbortSignal,
  ): Promise<WriteOutcome> {
    checkDocument(doc);
    const rows = items.map((item) => this.chunkRow(doc, item));
    const before = await this.records(doc, signal);
    const outcome = decideUpsert(stateOf(newest(before)), doc.version);
    if (outcome !== 'applied') return outcome;
    for (let start = 0; start < rows.length; start += UPSERT_BATCH) {
      await this.upsert(
        this.collection,
        rows.slice(start, start + UPSERT_BATCH),
        `writing vectors of ${doc.docId}`,
        signal,
      );
    }
    // Before the record: once it is there, a redelivery is a no-op and would never clean up.
    if (before.length > 0)
      await this.deleteWhere(
        this.collection,
        olderVersionsFilter(doc, doc.version, false),
        `removing replaced vectors of ${doc.docId}`,
        signal,
      );
    return this.record(doc, false, items.length, before, signal);
  }

  async deleteDocument(ref: VersionedDocumentKey, signal?: AbortSignal): Promise<WriteOutcome> {
    checkDocument(ref);
    const before = await this.records(ref, signal);
    const outcome = decideDelete(stateOf(newest(before)), ref.version);
    if (outcome !== 'applied') return outcome;
    await this.deleteWhere(
      this.collection,
      olderVersionsFilter(ref, ref.version, true),
      `deleting vectors of ${ref.docId}`,
      signal,
    );
    return this.record(ref, true, 0, before, signal);
  }

  writeDocuments(writes: readonly DocumentWrite<EmbeddedChunk>[], signal?: AbortSignal): Promise<WriteOutcome[]> {
    return writeOneByOne(this, writes, signal);
  }

  async documentState(key: DocumentKey, signal?: AbortSignal): Promise<DocumentState | undefined> {
    return stateOf(newest(await this.records(key, signal)));
  }

  async countChunks(signal?: AbortSignal): Promise<KbChunkCount[]> {
    const kbs = new Map<string, { tenantId: string; kbId: string; documents: number }>();
    for (let after = ''; ;) {
      const page = await this.query(
        this.documents,
        liveRecordsAfter(after),
        ['pk', 'tenant_id', 'kb_id'],
        QUERY_LIMIT,
        'listing knowledge bases',
        signal,
      );
      const rows = page.map((row) => parse(kbRowSchema, row, 'document record'));
      // One live record per document.
      for (const row of rows) {
        const key = JSON.stringify([row.tenant_id, row.kb_id]);
        const kb = kbs.get(key) ?? { tenantId: row.tenant_id, kbId: row.kb_id, documents: 0 };
        kb.documents += 1;
        kbs.set(key, kb);
      }
      if (rows.length < QUERY_LIMIT) break;
      // Query pages come back in primary-key order, so the last key starts the next page.
      after = rows.reduce((max, row) => (row.pk > max ? row.pk : max), after);
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

  /**
   * Adds this write's record, then reads the records back to settle races: the newest record
   * decides the outcome, and what is older than it goes.
   */
  private async record(
    doc: VersionedDocumentKey,
    deleted: boolean,
    chunks: number,
    before: readonly RecordRow[],
    signal?: AbortSignal,
  ): Promise<WriteOutcome> {
    const pk = recordKey(doc, deleted);
    await this.upsert(
      this.documents,
      [
        {
          pk,
          tenant_id: doc.tenantId,
          kb_id: doc.kbId,
          doc_id: doc.docId,
          doc_version: doc.version,
          deleted,
          chunks,
          placeholder: RECORD_PLACEHOLDER,
        },
      ],
      `recording ${doc.docId} version ${doc.version}`,
      signal,
    );
    const after = await this.records(doc, signal);
    const winner = newest(after) ?? { pk, doc_version: doc.version, deleted, chunks };
    const raced = after.some((row) => row.pk !== pk && !before.some((seen) => seen.pk === row.pk));
    if (winner.pk !== pk || raced) {
      await this.deleteWhere(
        this.collection,
        olderVersionsFilter(doc, winner.doc_version, winner.deleted),
        `removing superseded vectors of ${doc.docId}`,
        signal,
      );
    }
    if (after.length > 1) {
      await this.deleteWhere(
        this.documents,
        olderRecordsFilter(doc, winner.doc_version, winner.deleted, winner.pk),
        `removing superseded records of ${doc.docId}`,
        signal,
      );
    }
    if (winner.pk === pk) return 'applied';
    return deleted ? decideDelete(stateOf(winner), doc.version) : decideUpsert(stateOf(winner), doc.version);
  }

  private async records(key: DocumentKey, signal?: AbortSignal): Promise<RecordRow[]> {
    const rows = await this.query(
      this.documents,
      documentFilter(key),
      ['pk', 'doc_version', 'deleted', 'chunks'],
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
    return new MilvusVectorBackend(client, options.dimensions, collection, documents, hnsw.ef);
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
