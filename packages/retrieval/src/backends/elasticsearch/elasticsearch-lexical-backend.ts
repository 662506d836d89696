import { Client } from '@elastic/elasticsearch';
import type { estypes } from '@elastic/elasticsearch';
import { HoplineError, ValidationError } from '@hopline/contracts';
import { wholeDateAndArticleTerms } from '@hopline/text';
import { z } from 'zod';
import { assertScope } from '../scope.js';
import type {
  DocumentKey,
  DocumentState,
  DocumentWrite,
  IndexedChunk,
  KbChunkCount,
  LexicalBackend,
  LexicalSearchRequest,
  ScoredChunk,
  SearchScope,
  VersionedDocumentKey,
  WriteOutcome,
  WriteResult,
} from '../types.js';
import { selectedDocIds } from '../types.js';
import type { Bm25Parameters } from '../../lexical/bm25-index.js';
import { DEFAULT_BM25_PARAMETERS } from '../../lexical/bm25-index.js';
import { decideDelete, decideUpsert } from '../../storage/versioning.js';
import { elasticsearchError, statusError } from './errors.js';
import type { DocumentChange, SharedGraphSource } from '../../graph/shared-graph-sync.js';
import type { ElasticsearchSetupLog, TextAnalyzer } from './index-setup.js';
import {
  chunkIndexDefinition,
  detectAnalyzer,
  documentIndexDefinition,
  ensureFields,
  ensureIndex,
  ENTITY_GRAPH_CHUNK_FIELDS,
  ENTITY_GRAPH_RECORD_FIELDS,
  warnOnDrift,
  WHOLE_TERMS_FIELDS,
} from './index-setup.js';

export interface ElasticsearchLexicalBackendOptions {
  /** The cluster URL, e.g. `http://127.0.0.1:9200`; ignored when `client` is given. */
  node?: string;
  /** A configured client (tests pass one on a mock connection). */
  client?: Client;
  /** Index holding the chunks (default `hopline-chunks`). */
  index?: string;
  /** Index holding one version record per document (default `<index>-documents`). */
  documentsIndex?: string;
  /** k1 and b of the index's BM25 similarity (defaults 1.5 and 0.75). Fixed when the index is created. */
  bm25?: Partial<Bm25Parameters>;
  /** How much a title match counts against a body match (default 2, as in the embedded index). */
  titleBoost?: number;
  /** Per-request timeout of a client built from `node` (default 10 s); the caller's deadline still applies. */
  requestTimeoutMs?: number;
  /** Most actions in one `_bulk` request of a batch write (default 1,000); a larger batch is split. */
  bulkMaxOperations?: number;
  /** Most bytes of one `_bulk` request body (default 5 MiB); a larger batch is split. */
  bulkMaxBytes?: number;
  log?: ElasticsearchSetupLog;
}

/** How a batch write splits its `_bulk` requests. */
const DEFAULT_BULK_LIMITS: { maxOperations: number; maxBytes: number } = {
  maxOperations: 1_000,
  maxBytes: 5 * 1024 * 1024,
};

/** Documents per delete_by_query or chunk read: under the default 1,024 boolean clauses. */
const DOCUMENTS_PER_QUERY = 500;

/** Hits per page of a read that pages through records or chunks. */
const READ_PAGE = 1_000;

export const DEFAULT_ELASTICSEARCH_INDEX = 'hopline-chunks';

const COUNT_PAGE = 1_000;

const chunkSourceSchema = z.object({
  chunk_id: z.string().min(1),
  tenant_id: z.string().min(1),
  kb_id: z.string().min(1),
  doc_id: z.string().min(1),
  doc_version: z.number().int().nonnegative(),
  title: z.string(),
  text: z.string(),
  span_start: z.number().int().nonnegative(),
  span_end: z.number().int().nonnegative(),
  dedupe_key: z.string().min(1),
  effective_date: z.string(),
  source_uri: z.string(),
});
type ChunkSource = z.infer<typeof chunkSourceSchema> & { body: string; entities?: string[]; whole_terms?: string };

/** A chunk as the entity graph reads it back: with the entity keys it was written with, if any. */
const graphChunkSourceSchema = chunkSourceSchema.extend({ entities: z.array(z.string()).optional() });
const GRAPH_SOURCE_FIELDS = Object.keys(graphChunkSourceSchema.shape);

const documentSourceSchema = z.object({
  tenant_id: z.string(),
  kb_id: z.string(),
  doc_id: z.string(),
  doc_version: z.number().int().nonnegative(),
  deleted: z.boolean(),
  chunks: z.number().int().nonnegative(),
  // Absent on records written before the entity graph read them.
  changed_at: z.number().int().optional(),
});
type DocumentSource = z.infer<typeof documentSourceSchema>;

const countBucketKeySchema = z.object({ tenant: z.string(), kb: z.string() });

const SEARCHED_SOURCE_FIELDS = Object.keys(chunkSourceSchema.shape);

/**
 * BM25 on Elasticsearch. Scope is a `filter` clause the query text never reaches; writes carry
 * the document version as an external version, so an older write loses to a newer one inside
 * Elasticsearch itself, whatever order redeliveries arrive in.
 *
 * Each document also has a record in `documentsIndex` whose external version ranks its state:
 * 2v for version v, 2v + 1 for a delete at v. That encodes the shared version rules
 * (`storage/versioning.ts`) — a delete at v beats version v, version v + 1 beats both — so the
 * record never moves backwards, even when two workers write at once. The chunks a write
 * replaces are removed before its record is written: once the record is there, a redelivery is
 * 'unchanged' and would never clean up. A record that replaced another removes them once more,
 * for a writer of an older state that landed its chunks in between; a writer whose record lost
 * removes its own.
 *
 * A first version replaces nothing, so it runs no cleanup; that leaves the chunks of a write
 * that landed them but never its record (the record write failed, the worker died) when a
 * newer version is applied before that write's redelivery. The redelivery is then 'stale', and
 * a stale upsert removes the document's chunks older than the record's state: the leftovers
 * are there, and the recorded version's own chunks (or newer ones) are not touched.
 */
export class ElasticsearchLexicalBackend implements LexicalBackend, SharedGraphSource {
  readonly name = 'elasticsearch';

  constructor(
    private readonly client: Client,
    private readonly index: string,
    private readonly documentsIndex: string,
    /** The analyzer the chunks are indexed with, as detected at start-up. */
    readonly analyzer: TextAnalyzer,
    private readonly titleBoost: number,
    private readonly ownsClient: boolean,
    private readonly bulkLimits = DEFAULT_BULK_LIMITS,
  ) {}

  async search(request: LexicalSearchRequest, signal: AbortSignal): Promise<ScoredChunk[]> {
    assertScope(request.scope);
    const response = await this.call('searching', signal, (options) =>
      this.client.search<ChunkSource>(
        {
          index: this.index,
          size: request.limit,
          track_total_hits: false,
          _source: SEARCHED_SOURCE_FIELDS,
          query: {
            bool: {
              // The verified scope, as filters: the query text is only ever a match value.
              filter: scopeFilters(request.scope),
              must: [
                {
                  multi_match: {
                    query: request.query,
                    fields: [`title^${this.titleBoost}`, 'body'],
                    type: 'most_fields',
                  },
                },
              ],
              ...wholeTermsClause(request.query),
            },
          },
        },
        options,
      ),
    );
    return response.hits.hits.map((hit) => ({ chunk: chunkFromSource(hit._source, hit._id), score: hit._score ?? 0 }));
  }

  async upsertDocument(
    doc: VersionedDocumentKey,
    items: readonly IndexedChunk[],
    signal?: AbortSignal,
  ): Promise<WriteOutcome> {
    checkVersion(doc.version);
    for (const chunk of items) checkBelongs(chunk, doc);
    const current = await this.documentState(doc, signal);
    const outcome = decideUpsert(current, doc.version);
    // A stale upsert may be the redelivery of a write whose chunks landed without their record,
    // which the newer version recorded since took for none and did not clean up (a first
    // version replaces nothing). Only what is older than the record goes: never the chunks of
    // the recorded version, nor those of a newer writer still on its way (a record never moves
    // back, and delete_by_query skips a chunk overwritten since its refresh). 'unchanged' needs
    // nothing: its record was written after all its chunks landed and what they replaced went.
    if (outcome === 'stale' && current)
      await this.removeChunksBefore(doc, { version: current.version, deleted: current.deleted }, signal);
    if (outcome !== 'applied') return outcome;
    if (items.length > 0) await this.writeChunks(doc, items, signal);
    // A first version replaces nothing.
    if (current) await this.removeChunksBefore(doc, { version: doc.version, deleted: false }, signal);
    const winner = await this.recordAndSettle(doc, { deleted: false, chunks: items.length }, signal);
    return winner ? decideUpsert(winner, doc.version) : 'applied';
  }

  async deleteDocument(ref: VersionedDocumentKey, signal?: AbortSignal): Promise<WriteOutcome> {
    checkVersion(ref.version);
    const outcome = decideDelete(await this.documentState(ref, signal), ref.version);
    if (outcome !== 'applied') return outcome;
    // A delete clears up to its version whatever was recorded.
    await this.removeChunksBefore(ref, { version: ref.version, deleted: true }, signal);
    const winner = await this.recordAndSettle(ref, { deleted: true, chunks: 0 }, signal);
    return winner ? decideDelete(winner, ref.version) : 'applied';
  }

  /**
   * The bulk path: per round, one `_mget` of the records, one `_bulk` of every applied upsert's
   * chunks, one refresh + delete_by_query for the chunks the writes replace (and those older
   * than the record a stale upsert lost to), one `_bulk` of the records (after both, so a record
   * never stands for chunks that failed or for a cleanup still to do), and one refresh +
   * delete_by_query more where a record replaced another or lost. A document written twice in a
   * batch waits for the next round, so its second write is decided against its first, as one
   * call each would be.
   */
  async writeDocuments(writes: readonly DocumentWrite<IndexedChunk>[], signal?: AbortSignal): Promise<WriteResult[]> {
    const results: WriteResult[] = new Array<WriteResult>(writes.length);
    let pending = writes.map((write, at) => ({ write, at }));
    while (pending.length > 0) {
      const seen = new Set<string>();
      const round: BatchWrite[] = [];
      const later: BatchWrite[] = [];
      for (const entry of pending) {
        const key = documentRecordId(entry.write.doc);
        (seen.has(key) ? later : round).push(entry);
        seen.add(key);
      }
      await this.writeRound(round, results, signal);
      pending = later;
    }
    return results;
  }

  async documentState(key: DocumentKey, signal?: AbortSignal): Promise<DocumentState | undefined> {
    const response = await this.call('reading a document record', signal, (options) =>
      this.client.get<DocumentSource>(
        { index: this.documentsIndex, id: documentRecordId(key) },
        { ...options, ignore: [404] },
      ),
    );
    // A missing record answers `found: false`; a missing index answers an error body instead.
    if (response.found === undefined) throw statusError(404, `elasticsearch: index ${this.documentsIndex} is missing`);
    if (!response.found) return undefined;
    const record = parseOrThrow(documentSourceSchema, response._source, `document record ${response._id}`);
    return { version: record.doc_version, deleted: record.deleted, chunks: record.chunks };
  }

  async countChunks(signal?: AbortSignal): Promise<KbChunkCount[]> {
    const counts: KbChunkCount[] = [];
    let after: Record<string, estypes.FieldValue> | undefined;
    for (;;) {
      const response = await this.call('counting chunks', signal, (options) =>
        this.client.search(
          {
            index: this.index,
            size: 0,
            aggs: {
              kbs: {
                composite: {
                  size: COUNT_PAGE,
                  sources: [{ tenant: { terms: { field: 'tenant_id' } } }, { kb: { terms: { field: 'kb_id' } } }],
                  ...(after ? { after } : {}),
                },
                // Exact up to the threshold (ES's maximum), approximate beyond it.
                aggs: { documents: { cardinality: { field: 'doc_id', precision_threshold: 40_000 } } },
              },
            },
          },
          options,
        ),
      );
      const aggregation = response.aggregations?.kbs as estypes.AggregationsCompositeAggregate | undefined;
      const buckets = (aggregation?.buckets ?? []) as estypes.AggregationsCompositeBucket[];
      for (const bucket of buckets) {
        const key = parseOrThrow(countBucketKeySchema, bucket.key, 'chunk count bucket');
        const documents = (bucket.documents as estypes.AggregationsCardinalityAggregate | undefined)?.value ?? 0;
        counts.push({ tenantId: key.tenant, kbId: key.kb, documents, chunks: bucket.doc_count });
      }
      if (buckets.length < COUNT_PAGE || !aggregation?.after_key) return counts;
      after = aggregation.after_key;
    }
  }

  /**
   * The document records written at or after `sinceMs` (every record when undefined), a page
   * at a time, in (tenant, kb, document) order. A record written before records carried their
   * time is found only by a read of every record.
   */
  async *documentChanges(sinceMs: number | undefined, signal?: AbortSignal): AsyncGenerator<DocumentChange[]> {
    const query = sinceMs === undefined ? { match_all: {} } : { range: { changed_at: { gte: sinceMs } } };
    for await (const hits of this.pages<DocumentSource>(
      this.documentsIndex,
      query,
      ['doc_id'],
      'reading document records',
      signal,
    )) {
      yield hits.map(({ source, id }) => {
        const record = parseOrThrow(documentSourceSchema, source, `document record ${id}`);
        return {
          doc: { tenantId: record.tenant_id, kbId: record.kb_id, docId: record.doc_id, version: record.doc_version },
          deleted: record.deleted,
          chunks: record.chunks,
        };
      });
    }
  }

  /** The chunks of these document versions as stored, with their entity keys. */
  async readChunks(docs: readonly VersionedDocumentKey[], signal?: AbortSignal): Promise<IndexedChunk[]> {
    const chunks: IndexedChunk[] = [];
    for (let start = 0; start < docs.length; start += DOCUMENTS_PER_QUERY) {
      const query = {
        bool: {
          should: docs.slice(start, start + DOCUMENTS_PER_QUERY).map((doc) => ({
            bool: {
              filter: [
                { term: { tenant_id: doc.tenantId } },
                { term: { kb_id: doc.kbId } },
                { term: { doc_id: doc.docId } },
                { term: { doc_version: doc.version } },
              ],
            },
          })),
          minimum_should_match: 1,
        },
      };
      for await (const hits of this.pages<ChunkSource>(
        this.index,
        query,
        ['chunk_id'],
        'reading chunks',
        signal,
        GRAPH_SOURCE_FIELDS,
      ))
        for (const { source, id } of hits) {
          const stored = parseOrThrow(graphChunkSourceSchema, source, `chunk ${id}`);
          chunks.push({ ...chunkFromSource(stored, id), ...(stored.entities ? { entities: stored.entities } : {}) });
        }
    }
    return chunks;
  }

  async close(): Promise<void> {
    if (this.ownsClient) await this.client.close();
  }

  /** Every hit of the query, a page at a time, by search_after on tenant, kb and the given keys. */
  private async *pages<Source>(
    index: string,
    query: estypes.QueryDslQueryContainer,
    keys: readonly string[],
    what: string,
    signal?: AbortSignal,
    fields?: readonly string[],
  ): AsyncGenerator<Array<{ source: Source | undefined; id: string | null | undefined }>> {
    let after: estypes.SortResults | undefined;
    for (;;) {
      const response = await this.call(what, signal, (options) =>
        this.client.search<Source>(
          {
            index,
            size: READ_PAGE,
            track_total_hits: false,
            query,
            sort: ['tenant_id', 'kb_id', ...keys].map((field) => ({ [field]: 'asc' as const })),
            ...(fields ? { _source: [...fields] } : {}),
            ...(after ? { search_after: after } : {}),
          },
          options,
        ),
      );
      const { hits } = response.hits;
      if (hits.length > 0) yield hits.map((hit) => ({ source: hit._source, id: hit._id }));
      if (hits.length < READ_PAGE) return;
      after = hits.at(-1)?.sort;
    }
  }

  private async writeRound(round: readonly BatchWrite[], results: WriteResult[], signal?: AbortSignal): Promise<void> {
    const valid = round.filter(({ write, at }) => {
      try {
        checkVersion(write.doc.version);
        if (write.op === 'upsert') for (const chunk of write.items) checkBelongs(chunk, write.doc);
        return true;
      } catch (error) {
        results[at] = error as Error;
        return false;
      }
    });
    if (valid.length === 0) return;
    const states = await this.documentStates(
      valid.map(({ write }) => write.doc),
      signal,
    );
    const hadRecord = new Set<BatchWrite>();
    // Stale upserts, with the record they lost to: each may be the redelivery of a write whose
    // chunks landed without their record (see upsertDocument), so what is older than that
    // record goes, in the same delete_by_query as the replaced chunks.
    const staleCleanups: Array<{ entry: BatchWrite; state: { version: number; deleted: boolean } }> = [];
    let applying = valid.filter((entry, i) => {
      const { write, at } = entry;
      const state = states[i];
      const decide = write.op === 'upsert' ? decideUpsert : decideDelete;
      const outcome = decide(state, write.doc.version);
      if (outcome !== 'applied') results[at] = outcome;
      if (state) hadRecord.add(entry);
      if (outcome === 'stale' && write.op === 'upsert' && state)
        staleCleanups.push({ entry, state: { version: state.version, deleted: state.deleted } });
      return outcome === 'applied';
    });

    const chunkOps = applying.flatMap((entry) =>
      entry.write.op === 'upsert'
        ? entry.write.items.map((chunk) => ({
            entry,
            action: {
              index: {
                _index: this.index,
                _id: chunkDocumentId(chunk),
                version: chunk.docVersion,
                version_type: 'external',
              },
            } satisfies estypes.BulkOperationContainer,
            source: chunkSource(chunk),
          }))
        : [],
    );
    const chunkItems = await this.bulk(chunkOps, 'indexing chunks', signal);
    chunkItems.forEach((item, i) => {
      const { entry } = chunkOps[i] as (typeof chunkOps)[number];
      // 409: that chunk is already at this version or newer.
      if (!item.error || item.status === 409 || results[entry.at] !== undefined) return;
      results[entry.at] = statusError(
        item.status,
        `indexing chunk ${item._id ?? '?'} of ${entry.write.doc.docId}: ${item.error.type} (${item.error.reason ?? ''})`,
      );
    });
    applying = applying.filter(({ at }) => results[at] === undefined);
    // Before the records: once a record is there, a redelivery is a no-op and would never clean up.
    // A first version replaces nothing; a delete clears up to its version whatever was recorded.
    // A failure here turns a stale upsert's result into the error, so its redelivery tries again.
    await this.removeReplacedChunks(
      [
        ...applying
          .filter((entry) => hadRecord.has(entry) || entry.write.op === 'delete')
          .map((entry) => ({
            entry,
            state: { version: entry.write.doc.version, deleted: entry.write.op === 'delete' },
          })),
        ...staleCleanups,
      ],
      results,
      signal,
    );
    applying = applying.filter(({ at }) => results[at] === undefined);

    const recordOps = applying.map((entry) => {
      const { doc } = entry.write;
      const deleted = entry.write.op === 'delete';
      const source: DocumentSource = {
        tenant_id: doc.tenantId,
        kb_id: doc.kbId,
        doc_id: doc.docId,
        doc_version: doc.version,
        deleted,
        chunks: entry.write.op === 'upsert' ? entry.write.items.length : 0,
        changed_at: Date.now(),
      };
      return {
        entry,
        action: {
          index: {
            _index: this.documentsIndex,
            _id: documentRecordId(doc),
            version: rank(doc.version, deleted),
            version_type: 'external',
          },
        } satisfies estypes.BulkOperationContainer,
        source,
      };
    });
    const recordItems = await this.bulk(recordOps, 'writing document records', signal);
    const lost: BatchWrite[] = [];
    const cleanups: Array<{ entry: BatchWrite; state: { version: number; deleted: boolean } }> = [];
    recordItems.forEach((item, i) => {
      const { entry } = recordOps[i] as (typeof recordOps)[number];
      const { doc } = entry.write;
      const deleted = entry.write.op === 'delete';
      if (!item.error) {
        results[entry.at] = 'applied';
        // Replacing a record: a writer of an older state may have landed chunks since the cleanup.
        if (item.result === 'updated') cleanups.push({ entry, state: { version: doc.version, deleted } });
      } else if (item.status === 409) lost.push(entry);
      else
        results[entry.at] = statusError(
          item.status,
          `writing the record of ${doc.docId}: ${item.error.type} (${item.error.reason ?? ''})`,
        );
    });
    if (lost.length > 0) {
      // A newer version or a delete got there first: take back what these writes added.
      const winners = await this.documentStates(
        lost.map(({ write }) => write.doc),
        signal,
      );
      lost.forEach((entry, i) => {
        const winner = winners[i];
        const { doc } = entry.write;
        if (!winner) {
          results[entry.at] = new HoplineError(
            'internal',
            `document record of ${doc.docId} conflicted but cannot be read back`,
          );
          return;
        }
        cleanups.push({ entry, state: winner });
        results[entry.at] = (entry.write.op === 'upsert' ? decideUpsert : decideDelete)(winner, doc.version);
      });
    }
    await this.removeReplacedChunks(cleanups, results, signal);
  }

  /** The records of these documents, in their order, in one `_mget`. */
  async documentStates(keys: readonly DocumentKey[], signal?: AbortSignal): Promise<Array<DocumentState | undefined>> {
    const response = await this.call('reading document records', signal, (options) =>
      this.client.mget<DocumentSource>({ index: this.documentsIndex, ids: keys.map(documentRecordId) }, options),
    );
    return response.docs.map((got) => {
      if ('error' in got)
        throw statusError(undefined, `reading the record ${got._id}: ${got.error.type} (${got.error.reason ?? ''})`);
      if (!got.found) return undefined;
      const record = parseOrThrow(documentSourceSchema, got._source, `document record ${got._id}`);
      return { version: record.doc_version, deleted: record.deleted, chunks: record.chunks };
    });
  }

  /** Sends the actions in as few `_bulk` requests as the limits allow; the items come back in order. */
  private async bulk(
    ops: ReadonlyArray<{ action: estypes.BulkOperationContainer; source: object }>,
    what: string,
    signal?: AbortSignal,
  ): Promise<estypes.BulkResponseItem[]> {
    const items: estypes.BulkResponseItem[] = [];
    let request: object[] = [];
    let bytes = 0;
    const send = async (): Promise<void> => {
      if (request.length === 0) return;
      const operations = request;
      request = [];
      bytes = 0;
      const response = await this.call(what, signal, (options) => this.client.bulk({ operations }, options));
      for (const item of response.items) items.push(Object.values(item)[0] as estypes.BulkResponseItem);
    };
    for (const { action, source } of ops) {
      const size = Buffer.byteLength(JSON.stringify(action)) + Buffer.byteLength(JSON.stringify(source)) + 2;
      if (request.length / 2 >= this.bulkLimits.maxOperations || (bytes > 0 && bytes + size > this.bulkLimits.maxBytes))
        await send();
      request.push(action, source);
      bytes += size;
    }
    await send();
    return items;
  }

  /** One refresh, then one delete_by_query per few hundred documents for the chunks their new state replaced. */
  private async removeReplacedChunks(
    cleanups: ReadonlyArray<{ entry: BatchWrite; state: { version: number; deleted: boolean } }>,
    results: WriteResult[],
    signal?: AbortSignal,
  ): Promise<void> {
    if (cleanups.length === 0) return;
    await this.call('refreshing the chunks index', signal, (options) =>
      this.client.indices.refresh({ index: this.index }, options),
    );
    for (let start = 0; start < cleanups.length; start += DOCUMENTS_PER_QUERY) {
      const part = cleanups.slice(start, start + DOCUMENTS_PER_QUERY);
      const response = await this.call('removing replaced chunks', signal, (options) =>
        this.client.deleteByQuery(
          {
            index: this.index,
            conflicts: 'proceed',
            refresh: true,
            query: {
              bool: {
                should: part.map(({ entry, state }) => ({
                  bool: { filter: replacedChunksFilter(entry.write.doc, state) },
                })),
                minimum_should_match: 1,
              },
            },
          },
          options,
        ),
      );
      const failure = response.failures?.[0];
      // Which document a failure belongs to is not said: every write of this query fails. One
      // still unrecorded is redone whole by its redelivery; after its record (a race settled),
      // the redelivery is a no-op, and the failure only reports what may be left.
      if (failure)
        for (const { entry } of part)
          results[entry.at] = statusError(
            failure.status,
            `removing replaced chunks of ${entry.write.doc.docId}: ${failure.cause.type} (${failure.cause.reason ?? ''})`,
          );
    }
  }

  /** Indexes the chunks at the document's version; a chunk already at that version or newer stays as it is. */
  private async writeChunks(
    doc: VersionedDocumentKey,
    items: readonly IndexedChunk[],
    signal?: AbortSignal,
  ): Promise<void> {
    const operations: Array<estypes.BulkOperationContainer | ChunkSource> = [];
    for (const chunk of items) {
      operations.push(
        { index: { _index: this.index, _id: chunkDocumentId(chunk), version: doc.version, version_type: 'external' } },
        chunkSource(chunk),
      );
    }
    const response = await this.call('indexing chunks', signal, (options) => this.client.bulk({ operations }, options));
    if (!response.errors) return;
    for (const item of response.items) {
      const result = item.index;
      if (!result?.error || result.status === 409) continue;
      throw statusError(
        result.status,
        `indexing chunk ${result._id ?? '?'} of ${doc.docId}: ${result.error.type} (${result.error.reason ?? ''})`,
      );
    }
  }

  /**
   * Writes the record of a write whose replaced chunks are gone, then removes what is older than
   * the document's state now: when this record replaced another, chunks a writer of an older
   * state landed after that cleanup; when a newer record beat it, this write's own. Returns the
   * record that beat it, if one did.
   */
  private async recordAndSettle(
    doc: VersionedDocumentKey,
    state: { deleted: boolean; chunks: number },
    signal?: AbortSignal,
  ): Promise<DocumentState | undefined> {
    const record = await this.writeRecord(doc, state, signal);
    // No record before this one: no other writer's record landed in between either.
    if (record === 'created') return undefined;
    if (record === 'updated') {
      await this.removeChunksBefore(doc, { version: doc.version, deleted: state.deleted }, signal);
      return undefined;
    }
    await this.removeChunksBefore(doc, record, signal);
    return record;
  }

  /**
   * Writes the document's record at its rank. `created`/`updated`: this write is now the
   * document's state. Otherwise the record that beat it, read back.
   */
  private async writeRecord(
    doc: VersionedDocumentKey,
    state: { deleted: boolean; chunks: number },
    signal?: AbortSignal,
  ): Promise<'created' | 'updated' | DocumentState> {
    const record: DocumentSource = {
      tenant_id: doc.tenantId,
      kb_id: doc.kbId,
      doc_id: doc.docId,
      doc_version: doc.version,
      ...state,
      changed_at: Date.now(),
    };
    const response = await this.call('writing a document record', signal, (options) =>
      this.client.index(
        {
          index: this.documentsIndex,
          id: documentRecordId(doc),
          document: record,
          version: rank(doc.version, state.deleted),
          version_type: 'external',
        },
        { ...options, ignore: [409] },
      ),
    );
    if (response.result === 'created' || response.result === 'updated') return response.result;
    const winner = await this.documentState(doc, signal);
    if (!winner)
      throw new HoplineError('internal', `document record of ${doc.docId} conflicted but cannot be read back`);
    return winner;
  }

  /** Deletes the document's chunks older than `state` (a delete's own version included). */
  private async removeChunksBefore(
    doc: DocumentKey,
    state: { version: number; deleted: boolean },
    signal?: AbortSignal,
  ): Promise<void> {
    // delete_by_query sees what a refresh has published; the chunks being replaced may be younger.
    await this.call('refreshing the chunks index', signal, (options) =>
      this.client.indices.refresh({ index: this.index }, options),
    );
    const response = await this.call('removing replaced chunks', signal, (options) =>
      this.client.deleteByQuery(
        {
          index: this.index,
          conflicts: 'proceed',
          refresh: true,
          query: { bool: { filter: replacedChunksFilter(doc, state) } },
        },
        options,
      ),
    );
    const failure = response.failures?.[0];
    if (failure)
      throw statusError(
        failure.status,
        `removing replaced chunks of ${doc.docId}: ${failure.cause.type} (${failure.cause.reason ?? ''})`,
      );
  }

  private async call<T>(
    what: string,
    signal: AbortSignal | undefined,
    request: (options: { signal?: AbortSignal }) => Promise<T>,
  ): Promise<T> {
    try {
      signal?.throwIfAborted();
      return await request(signal ? { signal } : {});
    } catch (error) {
      throw elasticsearchError(error, what, signal);
    }
  }
}

/**
 * Connects, picks the analyzer (smartcn when the cluster has it, else standard, logged), and
 * creates the chunks and document-record indexes when they are missing.
 */
export async function createElasticsearchLexicalBackend(
  options: ElasticsearchLexicalBackendOptions,
): Promise<ElasticsearchLexicalBackend> {
  const log = options.log ?? { info() {}, warn() {} };
  const bm25 = { ...DEFAULT_BM25_PARAMETERS, ...options.bm25 };
  const index = options.index ?? DEFAULT_ELASTICSEARCH_INDEX;
  const documentsIndex = options.documentsIndex ?? `${index}-documents`;
  if (!options.client && !options.node)
    throw new ValidationError('elasticsearch: neither a client nor a node URL was given');
  // Retries are the caller's to decide (the guard's deadline, the ingest consumer's backoff).
  const client =
    options.client ??
    new Client({ node: options.node as string, requestTimeout: options.requestTimeoutMs ?? 10_000, maxRetries: 0 });
  try {
    const analyzer = await detectAnalyzer(client, log);
    if ((await ensureIndex(client, index, chunkIndexDefinition(analyzer, bm25), log)) === 'exists') {
      await warnOnDrift(client, index, analyzer, bm25, log);
      await ensureFields(client, index, { ...ENTITY_GRAPH_CHUNK_FIELDS, ...WHOLE_TERMS_FIELDS });
    }
    if ((await ensureIndex(client, documentsIndex, documentIndexDefinition(), log)) === 'exists')
      await ensureFields(client, documentsIndex, ENTITY_GRAPH_RECORD_FIELDS);
    return new ElasticsearchLexicalBackend(
      client,
      index,
      documentsIndex,
      analyzer,
      options.titleBoost ?? 2,
      !options.client,
      {
        maxOperations: options.bulkMaxOperations ?? DEFAULT_BULK_LIMITS.maxOperations,
        maxBytes: options.bulkMaxBytes ?? DEFAULT_BULK_LIMITS.maxBytes,
      },
    );
  } catch (error) {
    if (!options.client) await client.close();
    throw error;
  }
}

/** Chunk ids are unique within a knowledge base; the document id scopes them to it. */
export function chunkDocumentId(chunk: Pick<IndexedChunk, 'tenantId' | 'kbId' | 'chunkId'>): string {
  return [chunk.tenantId, chunk.kbId, chunk.chunkId].map(encodeURIComponent).join('/');
}

export function documentRecordId(key: DocumentKey): string {
  return [key.tenantId, key.kbId, key.docId].map(encodeURIComponent).join('/');
}

interface BatchWrite {
  write: DocumentWrite<IndexedChunk>;
  /** The write's place in the batch. */
  at: number;
}

/** The document's chunks older than `state` (a delete's own version included). */
function replacedChunksFilter(doc: DocumentKey, state: { version: number; deleted: boolean }) {
  const range = state.deleted ? { lte: state.version } : { lt: state.version };
  return [
    { term: { tenant_id: doc.tenantId } },
    { term: { kb_id: doc.kbId } },
    { term: { doc_id: doc.docId } },
    { range: { doc_version: range } },
  ];
}

/** A record's external version: a delete at v outranks version v, version v + 1 outranks both. */
export function rank(version: number, deleted: boolean): number {
  return version * 2 + (deleted ? 1 : 0);
}

function checkVersion(version: number): void {
  if (!Number.isSafeInteger(version) || version < 0 || !Number.isSafeInteger(rank(version, true))) {
    throw new ValidationError(`document version ${version} is not an integer Elasticsearch can order (0 to 2^52)`);
  }
}

function checkBelongs(chunk: IndexedChunk, doc: VersionedDocumentKey): void {
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
}

function chunkSource(chunk: IndexedChunk): ChunkSource {
  return {
    chunk_id: chunk.chunkId,
    tenant_id: chunk.tenantId,
    kb_id: chunk.kbId,
    doc_id: chunk.docId,
    doc_version: chunk.docVersion,
    title: chunk.title,
    body: chunk.lexicalText ?? chunk.text,
    text: chunk.text,
    span_start: chunk.span.start,
    span_end: chunk.span.end,
    dedupe_key: chunk.dedupeKey,
    effective_date: chunk.effectiveDate,
    source_uri: chunk.sourceUri,
    ...(chunk.entities ? { entities: [...chunk.entities] } : {}),
    ...wholeTermsOf(chunk.title, chunk.lexicalText ?? chunk.text),
  };
}

/** Each text apart: a title's year and a body's month are no date. */
function wholeTermsOf(...texts: string[]): { whole_terms?: string } {
  const terms = texts.flatMap((text) => wholeDateAndArticleTerms(text));
  return terms.length > 0 ? { whole_terms: terms.join(' ') } : {};
}

/** A query's dates and articles add to a chunk's score where it states them; they never filter. */
function wholeTermsClause(query: string): { should?: estypes.QueryDslQueryContainer[] } {
  const { whole_terms: terms } = wholeTermsOf(query);
  return terms ? { should: [{ match: { whole_terms: terms } }] } : {};
}

/** A hit back as a chunk; search hits leave out the lexical window, which no reader of a hit needs. */
function chunkFromSource(source: unknown, id: string | null | undefined): IndexedChunk {
  const stored = parseOrThrow(chunkSourceSchema, source, `chunk ${id ?? '?'}`);
  return {
    chunkId: stored.chunk_id,
    tenantId: stored.tenant_id,
    kbId: stored.kb_id,
    docId: stored.doc_id,
    docVersion: stored.doc_version,
    title: stored.title,
    text: stored.text,
    span: { start: stored.span_start, end: stored.span_end },
    dedupeKey: stored.dedupe_key,
    effectiveDate: stored.effective_date,
    sourceUri: stored.source_uri,
  };
}

function parseOrThrow<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success)
    throw new HoplineError('internal', `elasticsearch returned a malformed ${what}: ${parsed.error.message}`);
  return parsed.data;
}

/** The caller's verified scope as Elasticsearch filters: tenant, kbs and, when selected, documents. */
function scopeFilters(scope: SearchScope): Array<Record<string, unknown>> {
  const filters: Array<Record<string, unknown>> = [
    { term: { tenant_id: scope.tenantId } },
    { terms: { kb_id: [...scope.kbIds] } },
  ];
  const docIds = selectedDocIds(scope);
  if (docIds) filters.push({ terms: { doc_id: [...docIds] } });
  return filters;
}
