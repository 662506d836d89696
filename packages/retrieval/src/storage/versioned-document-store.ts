import { z } from 'zod';
import type {
  DocumentKey,
  DocumentState,
  DocumentWrite,
  KbChunkCount,
  StoredDocument,
  VersionedDocumentKey,
  WriteOutcome,
} from '../backends/types.js';
import { partitionKey } from '../backends/types.js';
import { OperationLog } from './operation-log.js';
import { BlobWriter } from './snapshot-blobs.js';
import type { IndexSnapshot, Verified } from './store-snapshot.js';
import { readSnapshot, recoverSnapshot, writeSnapshot } from './store-snapshot.js';
import { decideDelete, decideUpsert } from './versioning.js';

export interface ItemCodec<Item> {
  /** The item as a log line holds it: self-contained JSON. */
  encode(item: Item): unknown;
  /**
   * The item as a snapshot of `doc` holds it, when it has parts (a vector, a chunk read only on
   * demand) that are cheaper to keep as bytes in the snapshot's item blobs than as text
   * (default: `encode`).
   */
  encodeForSnapshot?(item: Item, itemBlobs: BlobWriter, doc: DocumentKey): unknown;
  /**
   * Throws on a value that is not a valid item of `doc`; `itemBlobs` are the snapshot's (empty
   * for a log line). `verified`: which of the value and the item bytes are from a snapshot that
   * matched its checksums, so are as this codec encoded them from a valid item, and need not be
   * validated field by field again.
   */
  decode(value: unknown, itemBlobs: Buffer, verified: Verified, doc: DocumentKey): Item;
}

/** Told about every change, in order, so an index can follow the store. */
export interface StoreListener<Item> {
  added(doc: DocumentKey, items: readonly Item[]): void;
  removed(doc: DocumentKey, items: readonly Item[]): void;
  /** A live document read from the snapshot, whose index state the snapshot's index part restored. */
  restored(doc: DocumentKey, items: readonly Item[]): void;
}

export interface StoreFiles {
  /** The write log: every write since the last snapshot. */
  log: string;
  /** The snapshot's folder. */
  snapshot: string;
  /** The index's part of the snapshot. */
  index: IndexSnapshot;
  /** Log entries after which a snapshot is taken (default: 1,000 or a quarter of the documents, whichever is more). */
  snapshotAfter?: number;
  /**
   * Told of a snapshot a write called for that could not be taken (a full disk). The write
   * stands: it is in the log, which keeps growing until a later write's snapshot succeeds.
   * Default: a process warning.
   */
  onSnapshotFailed?: (error: unknown) => void;
}

interface Entry<Item> extends DocumentState {
  key: VersionedDocumentKey;
  items: readonly Item[];
}

const documentKeySchema = z.object({
  tenantId: z.string().min(1),
  kbId: z.string().min(1),
  docId: z.string().min(1),
  version: z.number().int().nonnegative(),
});

const logEntrySchema = z.discriminatedUnion('op', [
  z.object({ op: z.literal('upsert'), doc: documentKeySchema, items: z.array(z.unknown()) }),
  z.object({ op: z.literal('delete'), doc: documentKeySchema }),
]);
type LogEntry = z.infer<typeof logEntrySchema>;

// A snapshot entry of format 5: [tenantId, kbId, docId, version, items, listed] (items null for a
// tombstone). Arrays rather than a log entry's objects: half the bytes, and a start parses a
// hundred thousand of them on each side (older snapshots' entries are log entries). `listed`
// is written only as false, on a document without items whose kb no document ever gave items
// to: a replay never lists such a kb, so its restore must not either.
const snapshotEntrySchema = z.tuple([
  z.string().min(1),
  z.string().min(1),
  z.string().min(1),
  z.number().int().nonnegative(),
  z.array(z.unknown()).nullable(),
  z.literal(false).optional(),
]);
type SnapshotEntry = z.infer<typeof snapshotEntrySchema>;

const SNAPSHOT_MIN_ENTRIES = 1_000;
/** A log line's items are whole in the line, and validated as they are read. */
const NO_BLOBS = Buffer.alloc(0);
const UNVERIFIED: Verified = { entries: false, items: false };

function documentId(key: DocumentKey): string {
  return `${key.tenantId}\u0000${key.kbId}\u0000${key.docId}`;
}

/**
 * Documents, their versions (tombstones included) and their items, with the version rules
 * applied and every write logged before it is acknowledged. Writes run one at a time, so the
 * log order is the order in which they were decided, and a replay decides them the same way.
 */
export class VersionedDocumentStore<Item> {
  private readonly documents = new Map<string, Entry<Item>>();
  private readonly perKb = new Map<string, KbChunkCount>();
  private writes: Promise<unknown> = Promise.resolve();
  /** The snapshot loaded is older (its format, or an index part the index rebuilt): the next close rewrites it, so the next start reads the current one. */
  private olderSnapshot = false;

  private constructor(
    private readonly codec: ItemCodec<Item>,
    private readonly listener: StoreListener<Item>,
    private readonly persisted: { files: StoreFiles; log: OperationLog; durable: boolean } | undefined,
  ) {}

  /**
   * Without `files` the store lives in memory only. With them it loads the snapshot (documents
   * and index state, no index rebuilt) and replays only the log written since.
   */
  static async open<Item>(options: {
    files?: StoreFiles;
    durable?: boolean;
    codec: ItemCodec<Item>;
    listener: StoreListener<Item>;
  }): Promise<VersionedDocumentStore<Item>> {
    const { files } = options;
    if (files === undefined) return new VersionedDocumentStore(options.codec, options.listener, undefined);
    const durable = options.durable ?? true;
    const snapshotted = await recoverSnapshot(files.snapshot);
    const { log, entries } = await OperationLog.open(files.log, { durable });
    const store = new VersionedDocumentStore(options.codec, options.listener, { files, log, durable });
    try {
      if (snapshotted) {
        let at = 0;
        const { older } = await readSnapshot(files.snapshot, files.index, (raw, itemBlobs, verified) => {
          at++;
          if (Array.isArray(raw)) {
            const entry = verified.entries
              ? (raw as SnapshotEntry)
              : parseEntry(snapshotEntrySchema, 'document', raw, files.snapshot, at);
            const [tenantId, kbId, docId, version, items, listed = true] = entry;
            store.restoreEntry({ tenantId, kbId, docId, version }, items, itemBlobs, verified, listed);
            return;
          }
          const entry = verified.entries
            ? (raw as LogEntry)
            : parseEntry(logEntrySchema, 'write', raw, files.snapshot, at);
          store.restoreEntry(pickKey(entry.doc), entry.op === 'upsert' ? entry.items : null, itemBlobs, verified, true);
        });
        store.olderSnapshot = older;
      }
      entries.forEach((raw, at) => store.applyEntry(parseEntry(logEntrySchema, 'write', raw, files.log, at + 1)));
    } catch (error) {
      // A store that cannot open leaves no log file open behind it.
      await log.close();
      throw error;
    }
    return store;
  }

  /** Write-log entries since the last snapshot: what a restart replays. */
  get tail(): number {
    return this.persisted?.log.entries ?? 0;
  }

  upsert(doc: VersionedDocumentKey, items: readonly Item[]): Promise<WriteOutcome> {
    return this.writeOne({ op: 'upsert', doc, items });
  }

  delete(ref: VersionedDocumentKey): Promise<WriteOutcome> {
    return this.writeOne({ op: 'delete', doc: ref });
  }

  /**
   * Applies the writes in order as one batch: each is decided against the state the writes
   * before it left (the same document twice in a batch ends as it would one write at a time),
   * all are logged with one append, and only then do the indexes see them.
   */
  write(writes: readonly DocumentWrite<Item>[]): Promise<WriteOutcome[]> {
    return this.serialise(async () => {
      const decided = new Map<string, DocumentState>();
      const outcomes: WriteOutcome[] = [];
      const changes: Change<Item>[] = [];
      for (const write of writes) {
        const id = documentId(write.doc);
        const { outcome, change } = decide(write, decided.get(id) ?? this.documents.get(id));
        outcomes.push(outcome);
        if (!change) continue;
        changes.push(change);
        decided.set(id, { version: change.doc.version, deleted: change.deleted, chunks: change.items.length });
      }
      await this.persisted?.log.append(
        writes.filter((_, i) => outcomes[i] === 'applied').map((write) => this.logEntry(write)),
      );
      for (const change of changes) this.replace(change.doc, change.items, change.deleted);
      // Logged and applied, the writes stand whether or not the snapshot they call for is taken.
      await this.snapshotIfLarge().catch((error: unknown) => this.snapshotFailed(error));
      return outcomes;
    });
  }

  state(key: DocumentKey): DocumentState | undefined {
    const entry = this.documents.get(documentId(key));
    return entry ? { version: entry.version, deleted: entry.deleted, chunks: entry.chunks } : undefined;
  }

  /** The items of the document as indexed now; none when it is deleted or unknown. */
  items(key: DocumentKey): readonly Item[] {
    return this.documents.get(documentId(key))?.items ?? [];
  }

  /** Every document of one kb, tombstones included, as it stands now. */
  documentsOf(tenantId: string, kbId: string): Array<StoredDocument<Item>> {
    const found: Array<StoredDocument<Item>> = [];
    for (const entry of this.documents.values()) {
      if (entry.key.tenantId === tenantId && entry.key.kbId === kbId)
        found.push({ doc: entry.key, deleted: entry.deleted, items: entry.items });
    }
    return found;
  }

  counts(): KbChunkCount[] {
    return [...this.perKb.values()].map((count) => ({ ...count }));
  }

  /**
   * Takes a snapshot when the log has entries since the last, so that the next start replays
   * none, or when the one loaded is older (a worker upgraded over it: its format, or index terms another tokenizer made).
   */
  async close(): Promise<void> {
    const persisted = this.persisted;
    if (!persisted) return this.writes.then(() => undefined);
    // In the write queue, as every write: a write that comes meanwhile neither changes the index
    // under the snapshot nor lands in a log the snapshot then clears; it finds the log closed
    // and is refused, so its delivery comes back.
    await this.serialise(async () => {
      try {
        if (persisted.log.entries > 0 || this.olderSnapshot) await this.snapshot();
      } finally {
        await persisted.log.close();
      }
    });
  }

  /**
   * A snapshot's document (`items` null for a tombstone): state and counts only, as the index
   * part of the snapshot has it indexed. `listed`: whether its kb is listed on its account when
   * it has no items, as it is after a replay once a document of the kb had items.
   */
  private restoreEntry(
    doc: VersionedDocumentKey,
    stored: readonly unknown[] | null,
    itemBlobs: Buffer,
    verified: Verified,
    listed: boolean,
  ): void {
    const items = stored === null ? [] : stored.map((item) => this.codec.decode(item, itemBlobs, verified, doc));
    this.documents.set(documentId(doc), {
      key: doc,
      version: doc.version,
      deleted: stored === null,
      chunks: items.length,
      items,
    });
    // A tombstone counts nothing; its kb is listed, as after the delete that made it, unless
    // no document of the kb ever had items (a replay lists a kb only once one had).
    if (items.length === 0) return listed ? this.count(doc, 0, 0) : undefined;
    this.count(doc, 1, items.length);
    this.listener.restored(doc, items);
  }

  private applyEntry(entry: LogEntry): void {
    const write: DocumentWrite<Item> =
      entry.op === 'upsert'
        ? {
            op: 'upsert',
            doc: entry.doc,
            items: entry.items.map((item) => this.codec.decode(item, NO_BLOBS, UNVERIFIED, entry.doc)),
          }
        : { op: 'delete', doc: entry.doc };
    const { change } = decide(write, this.documents.get(documentId(entry.doc)));
    if (change) this.replace(change.doc, change.items, change.deleted);
  }

  private logEntry(write: DocumentWrite<Item>): LogEntry {
    return write.op === 'upsert'
      ? { op: 'upsert', doc: pickKey(write.doc), items: write.items.map((item) => this.codec.encode(item)) }
      : { op: 'delete', doc: pickKey(write.doc) };
  }

  private async writeOne(write: DocumentWrite<Item>): Promise<WriteOutcome> {
    const [outcome] = await this.write([write]);
    return outcome as WriteOutcome;
  }

  private replace(doc: VersionedDocumentKey, items: readonly Item[], deleted: boolean): void {
    const id = documentId(doc);
    const previous = this.documents.get(id);
    if (previous && previous.items.length > 0) {
      this.listener.removed(previous.key, previous.items);
      this.count(doc, -1, -previous.items.length);
    }
    this.documents.set(id, { key: pickKey(doc), version: doc.version, deleted, chunks: items.length, items });
    if (items.length > 0) {
      this.listener.added(doc, items);
      this.count(doc, 1, items.length);
    }
  }

  private count(doc: DocumentKey, documents: number, chunks: number): void {
    const kb = partitionKey(doc.tenantId, doc.kbId);
    const count = this.perKb.get(kb) ?? { tenantId: doc.tenantId, kbId: doc.kbId, documents: 0, chunks: 0 };
    count.documents += documents;
    count.chunks += chunks;
    this.perKb.set(kb, count);
  }

  private snapshotFailed(error: unknown): void {
    const report =
      this.persisted?.files.onSnapshotFailed ??
      ((failure: unknown) =>
        process.emitWarning(`a snapshot could not be taken; writes go on in the log: ${String(failure)}`));
    report(error);
  }

  private async snapshotIfLarge(): Promise<void> {
    if (!this.persisted) return;
    const after = this.persisted.files.snapshotAfter ?? Math.max(SNAPSHOT_MIN_ENTRIES, this.documents.size / 4);
    if (this.persisted.log.entries >= after) await this.snapshot();
  }

  /**
   * Writes the live documents and the index state, then empties the log: a crash before the
   * log is emptied replays writes the snapshot already holds, which the version rules ignore.
   */
  private async snapshot(): Promise<void> {
    if (!this.persisted) return;
    const { files, log, durable } = this.persisted;
    const live = this.documents;
    const listedKbs = new Set(this.perKb.keys());
    const itemBlobs = new BlobWriter();
    const encode = this.codec.encodeForSnapshot?.bind(this.codec) ?? ((item: Item) => this.codec.encode(item));
    await writeSnapshot(
      files.snapshot,
      (function* (): Generator<SnapshotEntry> {
        for (const { key, deleted, items } of live.values()) {
          const entry: SnapshotEntry = [
            key.tenantId,
            key.kbId,
            key.docId,
            key.version,
            deleted ? null : items.map((item) => encode(item, itemBlobs, key)),
          ];
          if (items.length === 0 && !listedKbs.has(partitionKey(key.tenantId, key.kbId))) entry.push(false);
          yield entry;
        }
      })(),
      itemBlobs,
      files.index,
      durable,
    );
    await log.clear();
    this.olderSnapshot = false;
  }

  private serialise<T>(write: () => Promise<T>): Promise<T> {
    const result = this.writes.then(write, write);
    this.writes = result.catch(() => undefined);
    return result;
  }
}

interface Change<Item> {
  doc: VersionedDocumentKey;
  items: readonly Item[];
  deleted: boolean;
}

/** The version rules applied to one write: its outcome, and what it changes when applied. */
function decide<Item>(
  write: DocumentWrite<Item>,
  current: DocumentState | undefined,
): { outcome: WriteOutcome; change?: Change<Item> } {
  if (write.op === 'upsert') {
    const outcome = decideUpsert(current, write.doc.version);
    return outcome === 'applied'
      ? { outcome, change: { doc: write.doc, items: write.items, deleted: false } }
      : { outcome };
  }
  const outcome = decideDelete(current, write.doc.version);
  if (outcome !== 'applied') return { outcome };
  const version = Math.max(write.doc.version, current?.version ?? 0);
  return { outcome, change: { doc: { ...write.doc, version }, items: [], deleted: true } };
}

/** Entry `at` of `file` as `schema` reads it; `what` says what it should have been. */
function parseEntry<T>(schema: z.ZodType<T>, what: string, raw: unknown, file: string, at: number): T {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new Error(`${file}: entry ${at} is not a valid ${what}: ${parsed.error.message}`);
  return parsed.data;
}

function pickKey(doc: VersionedDocumentKey): VersionedDocumentKey {
  return { tenantId: doc.tenantId, kbId: doc.kbId, docId: doc.docId, version: doc.version };
}
