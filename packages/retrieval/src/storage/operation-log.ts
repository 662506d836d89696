import { mkdir, open, readFile } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * An append-only JSON-lines file of write operations: the embedded indexes persist by logging
 * every write before they acknowledge it, and at start-up replay the log written since their
 * last snapshot (see `store-snapshot.ts`), which empties it.
 */
export class OperationLog {
  private handle: FileHandle | undefined;
  private lines: number;
  /** The length of the log's whole lines: where a failed append is cut back to. */
  private bytes: number;

  private constructor(
    readonly file: string,
    private readonly durable: boolean,
    handle: FileHandle,
    lines: number,
    bytes: number,
  ) {
    this.handle = handle;
    this.lines = lines;
    this.bytes = bytes;
  }

  /**
   * Opens (creating if needed) the log and returns its entries. A last line without its
   * newline, what a crash in the middle of an append leaves, is cut off even when it parses:
   * an entry's newline is written with it, so that append never completed and was never
   * acknowledged, and left in place the next append would run on from it. Damage anywhere else
   * is an error.
   */
  static async open(file: string, options: { durable: boolean }): Promise<{ log: OperationLog; entries: unknown[] }> {
    await mkdir(dirname(file), { recursive: true });
    let content = Buffer.alloc(0);
    try {
      content = await readFile(file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    const wholeBytes = content.lastIndexOf('\n') + 1;
    const lines = content.subarray(0, wholeBytes).toString('utf8').split('\n');
    const entries: unknown[] = [];
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i] as string;
      if (line.length === 0) continue;
      try {
        entries.push(JSON.parse(line));
      } catch (error) {
        throw new Error(`operation log ${file} is damaged at line ${i + 1}: ${(error as Error).message}`, {
          cause: error,
        });
      }
    }
    const handle = await open(file, 'a+');
    if (wholeBytes < content.length) await handle.truncate(wholeBytes);
    return { log: new OperationLog(file, options.durable, handle, entries.length, wholeBytes), entries };
  }

  get entries(): number {
    return this.lines;
  }

  /**
   * Appends the entries with one write and, when durable, one flush: a batch costs one sync.
   * An append that fails (the disk full part-way through its write) is cut off again, so that
   * none of it is replayed and the next append starts on a line of its own.
   */
  async append(entries: readonly unknown[]): Promise<void> {
    if (entries.length === 0) return;
    const handle = this.requireOpen();
    const bytes = Buffer.from(entries.map((entry) => `${JSON.stringify(entry)}\n`).join(''));
    try {
      const { bytesWritten } = await handle.write(bytes);
      if (bytesWritten !== bytes.length)
        throw new Error(`wrote ${bytesWritten} of ${bytes.length} bytes of operation log ${this.file}`);
      if (this.durable) await handle.datasync();
    } catch (error) {
      // Should the cut fail as well, the fragment stays: the next open drops it while it is the
      // last line, and reports the log damaged once a later append has followed it.
      await handle.truncate(this.bytes).catch(() => undefined);
      throw error;
    }
    this.bytes += bytes.length;
    this.lines += entries.length;
  }

  /** Empties the log, once a snapshot holds everything it held. */
  async clear(): Promise<void> {
    const handle = this.requireOpen();
    await handle.truncate(0);
    // Empty from here on, even should the flush fail: a failed append cuts back to this length.
    this.lines = 0;
    this.bytes = 0;
    if (this.durable) await handle.datasync();
  }

  async close(): Promise<void> {
    const handle = this.handle;
    this.handle = undefined;
    await handle?.close();
  }

  private requireOpen(): FileHandle {
    if (!this.handle) throw new Error(`operation log ${this.file} is closed`);
    return this.handle;
  }
}
