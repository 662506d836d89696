import { writevSync } from 'node:fs';
import { mkdir, open, readFile, rename, rm, stat, utimes, writeFile, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { UnavailableError } from '@hopline/contracts';
import type { KeyValueStore } from './bus.js';
import type { RetentionLimits } from './jetstream-policy.js';
import { assertValidKey } from './names.js';

/**
 * The log's file name: no key names it, since no key starts with "." (the files of the layout
 * before the log are named after their keys and share the folder).
 */
const LOG_FILE = '.values.log';
/** The generation before the current one, kept for reads until the next rotation removes it. */
const PREVIOUS_LOG_FILE = '.values.previous.log';
/** An empty file whose modification time is when the current generation began. */
const GENERATION_FILE = '.generation';
/** A record starts with the byte lengths of its key and of its value. */
const HEADER_BYTES = 8;
/** What the opening scan reads at a time: more than any record's header and key. */
const SCAN_CHUNK_BYTES = 1 << 20;
/** A log this small is never rewritten, however much of it is superseded. */
const COMPACT_ABOVE_BYTES = 1 << 20;
/** The longest a timer can wait (setTimeout's limit); a longer wait is taken in steps. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;

interface Place {
  offset: number;
  length: number;
}

interface QueuedRecord {
  key: string;
  /** Where the record starts; its value lies at `place`. */
  start: number;
  place: Place;
  bytes: Buffer[];
  settle: (error?: unknown) => void;
}

/**
 * A KeyValueStore in a folder, for the embedded mode: values survive a restart without a NATS
 * server. Every put appends one record (the key and the value, each after its length) to one
 * log file, and a key's value is its newest record: the puts of one turn of the event loop are
 * one write, where a file per key cost a file created, written, closed and renamed per put (a
 * question stores its trace about twice). A put resolves once its record is written (as a file
 * was, without fsync), and only then do reads see it, so a reader never sees half a value.
 *
 * The index of where each key's newest record lies is read from the log when the store opens
 * (at its first use). A record cut short, or one that is not a record (the process died during
 * a write), ends the log: it is cut off there. A log of which more is superseded than live is
 * rewritten then, with the live records only. Keys are checked like JetStream KV keys. Values
 * written before the log, one file per key (the key percent-encoded), are still read.
 *
 * With `retention` (the traces: the limits of their JetStream bucket, applied here too), values
 * age out by generations rather than one by one, since a record carries no time. A generation
 * takes puts for half the maximum age, or until it holds half the maximum bytes; then it becomes
 * the previous generation, still read, and the one before it is deleted. A previous generation
 * is deleted as well once the maximum age has passed since it began: every value in it is then
 * at least half that age. So a value is read for at least half the maximum age (unless the bytes
 * limit comes first) and never past the maximum age, across restarts too: each generation's
 * start is kept on disk (the current one's as an empty marker file's time, the previous one's as
 * its log's). The files hold at most about the maximum bytes.
 */
export function createFileKeyValueStore(
  dir: string,
  retention?: RetentionLimits,
): KeyValueStore & { close(): Promise<void> } {
  let store: Promise<Generations> | undefined;
  const opened = () =>
    (store ??= Generations.open(dir, retention).catch((error: unknown) => {
      store = undefined;
      throw error;
    }));
  const read = async (key: string) =>
    (await (await opened()).get(key)) ?? readKeyFile(join(dir, encodeURIComponent(key)));
  // A key's writes, one after the other: a conditional put's read and write have no other put of
  // the key between them (puts of different keys still share a write).
  const writes = new Map<string, Promise<unknown>>();
  const inTurn = <T>(key: string, write: () => Promise<T>): Promise<T> => {
    const turn = (writes.get(key) ?? Promise.resolve()).catch(() => undefined).then(write);
    writes.set(key, turn);
    void turn.finally(() => writes.get(key) === turn && writes.delete(key)).catch(() => undefined);
    return turn;
  };
  return {
    async put(key, value) {
      assertValidKey(key);
      await inTurn(key, async () => (await opened()).put(key, value));
    },
    async get(key) {
      assertValidKey(key);
      return read(key);
    },
    async putUnless(key, value, keeps) {
      assertValidKey(key);
      return inTurn(key, async () => {
        const stored = await read(key);
        if (stored !== undefined && keeps(stored)) return false;
        await (await opened()).put(key, value);
        return true;
      });
    },
    /** Waits for the puts made so far, then lets go of the log's files. */
    async close() {
      await (await store?.catch(() => undefined))?.close();
      store = undefined;
    },
  };
}

/** The current log and, with retention, the previous generation's, rotated and aged out when due. */
class Generations {
  /** Set while the logs are swapped or the previous one dropped: puts and reads wait for it. */
  private maintaining: Promise<void> | undefined;
  /** Reads that have picked their logs: a rotation waits for them before it closes those logs. */
  private readonly reading = new Set<Promise<unknown>>();
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  private constructor(
    private readonly dir: string,
    private readonly retention: RetentionLimits,
    private current: ValueLog,
    private startedAt: number,
    private previous: { log: ValueLog; startedAt: number } | undefined,
  ) {}

  static async open(dir: string, retention: RetentionLimits | undefined): Promise<Generations> {
    await mkdir(dir, { recursive: true });
    const current = await ValueLog.open(join(dir, LOG_FILE));
    if (retention === undefined) return new Generations(dir, { maxAgeMs: 0, maxBytes: 0 }, current, 0, undefined);
    const startedAt = await generationStart(join(dir, GENERATION_FILE));
    const previous = await openPrevious(join(dir, PREVIOUS_LOG_FILE));
    const generations = new Generations(dir, retention, current, startedAt, previous);
    await generations.maintain();
    generations.schedule();
    return generations;
  }

  async put(key: string, value: Uint8Array): Promise<void> {
    await this.maintain();
    await this.current.append(key, value);
  }

  async get(key: string): Promise<Uint8Array | undefined> {
    await this.maintain();
    const { current, previous } = this;
    const reading = (async () => (await current.read(key)) ?? (await previous?.log.read(key)))();
    this.reading.add(reading);
    try {
      return await reading;
    } finally {
      this.reading.delete(reading);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.maintaining;
    await Promise.all([this.current.close(), this.previous?.log.close()]);
  }

  private rotationDue(): boolean {
    const { maxAgeMs, maxBytes } = this.retention;
    return (
      (maxAgeMs > 0 && Date.now() - this.startedAt >= maxAgeMs / 2) ||
      (maxBytes > 0 && this.current.size >= maxBytes / 2)
    );
  }

  private previousExpired(): boolean {
    const { maxAgeMs } = this.retention;
    return this.previous !== undefined && maxAgeMs > 0 && Date.now() - this.previous.startedAt >= maxAgeMs;
  }

  /** Rotates the logs, or drops the previous one, when either is due; one at a time. */
  private async maintain(): Promise<void> {
    while (this.maintaining) await this.maintaining;
    if (this.closed || (!this.rotationDue() && !this.previousExpired())) return;
    this.maintaining = (async () => {
      await Promise.allSettled([...this.reading]);
      if (this.rotationDue()) await this.rotate();
      if (this.previousExpired()) await this.dropPrevious();
    })().finally(() => (this.maintaining = undefined));
    await this.maintaining;
  }

  /** The current log becomes the previous one, the previous one is deleted, and a new generation begins. */
  private async rotate(): Promise<void> {
    await Promise.all([this.current.close(), this.previous?.log.close()]);
    const previousFile = join(this.dir, PREVIOUS_LOG_FILE);
    try {
      await rename(join(this.dir, LOG_FILE), previousFile);
      // The previous generation's start, kept as its log's time: it is written no more.
      const began = new Date(this.startedAt);
      await utimes(previousFile, began, began);
      await writeFile(join(this.dir, GENERATION_FILE), '');
      this.startedAt = Date.now();
    } finally {
      // Reopened whether or not the files moved: a rotation that failed leaves a working store,
      // which tries again at its next put or read.
      this.previous = await openPrevious(previousFile);
      this.current = await ValueLog.open(join(this.dir, LOG_FILE));
    }
  }

  private async dropPrevious(): Promise<void> {
    await this.previous?.log.close();
    this.previous = undefined;
    await rm(join(this.dir, PREVIOUS_LOG_FILE), { force: true });
  }

  /** Maintains the logs when the age limit comes due even if nothing is put or read (a quiet store still ages out). */
  private schedule(): void {
    const { maxAgeMs } = this.retention;
    if (maxAgeMs <= 0 || this.closed) return;
    const next = Math.min(this.startedAt + maxAgeMs / 2, (this.previous?.startedAt ?? Infinity) + maxAgeMs);
    this.timer = setTimeout(
      () => {
        // A failure here is not lost: the next put or read tries again and reports it.
        void this.maintain()
          .catch(() => undefined)
          .then(() => this.schedule());
      },
      Math.min(Math.max(0, next - Date.now()), LONGEST_TIMER_MS),
    );
    // A store's clock never keeps the process alive.
    this.timer.unref();
  }
}

/** When the current generation began: the marker's time, or now for a folder that has none (it is made). */
async function generationStart(marker: string): Promise<number> {
  const began = await modifiedAt(marker);
  if (began !== undefined) return began;
  await writeFile(marker, '');
  return (await stat(marker)).mtimeMs;
}

/** The previous generation's log and its start (the log's time), or undefined when there is none. */
async function openPrevious(file: string): Promise<{ log: ValueLog; startedAt: number } | undefined> {
  const startedAt = await modifiedAt(file);
  if (startedAt === undefined) return undefined;
  const log = await ValueLog.open(file);
  // Opening may cut off a record cut short or rewrite the log, which moves its time: put it back.
  const began = new Date(startedAt);
  await utimes(file, began, began);
  return { log, startedAt };
}

/** When a file was last written, or undefined when there is none. */
async function modifiedAt(file: string): Promise<number | undefined> {
  try {
    return (await stat(file)).mtimeMs;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** A value stored as its own file, as before the log. */
async function readKeyFile(file: string): Promise<Uint8Array | undefined> {
  try {
    return await readFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

function isKey(key: string): boolean {
  try {
    assertValidKey(key);
    return true;
  } catch {
    return false;
  }
}

class ValueLog {
  /** Where the log's next record starts, once those queued and in flight are written. */
  private end: number;
  private queued: QueuedRecord[] = [];
  private writing: Promise<void> | undefined;
  private closed = false;

  private constructor(
    private readonly handle: FileHandle,
    private readonly index: Map<string, Place>,
    written: number,
  ) {
    this.end = written;
  }

  static async open(file: string): Promise<ValueLog> {
    let handle = await open(file, 'a+');
    try {
      const size = (await handle.stat()).size;
      const index = new Map<string, Place>();
      const whole = await scan(handle, size, index);
      if (whole < size) await handle.truncate(whole);
      let live = 0;
      for (const [key, place] of index) live += HEADER_BYTES + Buffer.byteLength(key) + place.length;
      if (whole > COMPACT_ABOVE_BYTES && whole - live > live) {
        const compacted = await rewrite(handle, index, `${file}.compacting`);
        await rename(`${file}.compacting`, file);
        await handle.close();
        handle = await open(file, 'a+');
        return new ValueLog(handle, compacted, live);
      }
      return new ValueLog(handle, index, whole);
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  /** The log's bytes, with the records queued. */
  get size(): number {
    return this.end;
  }

  /** The key's newest value written, or undefined when the log has none. */
  async read(key: string): Promise<Uint8Array | undefined> {
    const place = this.index.get(key);
    if (place === undefined) return undefined;
    const value = Buffer.allocUnsafe(place.length);
    await this.handle.read(value, 0, place.length, place.offset);
    return value;
  }

  append(key: string, value: Uint8Array): Promise<void> {
    if (this.closed) return Promise.reject(new UnavailableError('the key-value store is closed'));
    const keyBytes = Buffer.from(key);
    const header = Buffer.allocUnsafe(HEADER_BYTES);
    header.writeUInt32LE(keyBytes.length, 0);
    header.writeUInt32LE(value.byteLength, 4);
    // Copied: the caller may reuse its array before the write.
    const bytes = [header, keyBytes, Buffer.from(value)];
    const start = this.end;
    const place = { offset: start + HEADER_BYTES + keyBytes.length, length: value.byteLength };
    this.end = place.offset + place.length;
    return new Promise((resolve, reject) => {
      this.queued.push({
        key,
        start,
        place,
        bytes,
        settle: (error) => (error === undefined ? resolve() : reject(error)),
      });
      this.writing ??= this.writeQueued();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.writing;
    await this.handle.close();
  }

  /** Writes what was queued, as one write, until nothing is; a batch that failed is cut off again. */
  private async writeQueued(): Promise<void> {
    // The puts of this turn of the event loop join the first write.
    await Promise.resolve();
    while (this.queued.length > 0) {
      const batch = this.queued;
      this.queued = [];
      try {
        // Written on this thread, as pino writes logs: a batch is a few KB appended to the page
        // cache, and the thread pool's round trip (a request, its promise, the callback, a
        // thread woken) cost more than the write; nor does it wait behind DNS or crypto work.
        const bytes = batch.flatMap((record) => record.bytes);
        const length = bytes.reduce((sum, buffer) => sum + buffer.length, 0);
        const written = writevSync(this.handle.fd, bytes);
        if (written !== length) throw new UnavailableError(`wrote ${written} of ${length} bytes of the key-value log`);
        for (const record of batch) this.index.set(record.key, record.place);
        for (const record of batch) record.settle();
      } catch (error) {
        // Whatever part of the batch was written is cut off, and the records queued behind it move up.
        const start = (batch[0] as QueuedRecord).start;
        const last = batch.at(-1) as QueuedRecord;
        const moved = last.place.offset + last.place.length - start;
        await this.handle.truncate(start).catch(() => undefined);
        this.end -= moved;
        for (const record of this.queued) {
          record.start -= moved;
          record.place.offset -= moved;
        }
        for (const record of batch) record.settle(error);
      }
    }
    this.writing = undefined;
  }
}

/** Reads the log's records into `index` (the newest of each key wins); returns where the last whole one ends. */
async function scan(handle: FileHandle, size: number, index: Map<string, Place>): Promise<number> {
  const chunk = Buffer.allocUnsafe(SCAN_CHUNK_BYTES);
  let position = 0;
  while (position + HEADER_BYTES <= size) {
    const { bytesRead } = await handle.read(chunk, 0, Math.min(SCAN_CHUNK_BYTES, size - position), position);
    let at = 0;
    while (at + HEADER_BYTES <= bytesRead) {
      const keyLength = chunk.readUInt32LE(at);
      const valueLength = chunk.readUInt32LE(at + 4);
      const keyEnd = at + HEADER_BYTES + keyLength;
      if (keyEnd > bytesRead) break;
      const key = chunk.toString('latin1', at + HEADER_BYTES, keyEnd);
      const recordEnd = position + keyEnd + valueLength;
      if (!isKey(key) || recordEnd > size) return position + at;
      index.set(key, { offset: position + keyEnd, length: valueLength });
      at = recordEnd - position;
    }
    // Not even one header and key left in what was read: the log ends in a record cut short.
    if (at === 0) return position;
    position += at;
  }
  return position;
}

/** Writes the live records to `file`, in the order of the index; returns where each now lies. */
async function rewrite(from: FileHandle, index: Map<string, Place>, file: string): Promise<Map<string, Place>> {
  const to = await open(file, 'w');
  const places = new Map<string, Place>();
  try {
    let offset = 0;
    for (const [key, place] of index) {
      const keyBytes = Buffer.from(key);
      const record = Buffer.allocUnsafe(HEADER_BYTES + keyBytes.length + place.length);
      record.writeUInt32LE(keyBytes.length, 0);
      record.writeUInt32LE(place.length, 4);
      keyBytes.copy(record, HEADER_BYTES);
      await from.read(record, HEADER_BYTES + keyBytes.length, place.length, place.offset);
      await to.write(record);
      places.set(key, { offset: offset + HEADER_BYTES + keyBytes.length, length: place.length });
      offset += record.length;
    }
  } finally {
    await to.close();
  }
  return places;
}
