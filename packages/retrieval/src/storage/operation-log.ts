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

  private constructor(
    readonly file: string,
    private readonly durable: boolean,
    handle: FileHandle,
    lines: number,
  ) {
    this.handle = handle;
    this.lines = lines;
  }

  /**
   * Opens (creating if needed) the log and returns its entries. A torn last line, what a crash
   * in the middle of an append leaves, is dropped; damage anywhere else is an error.
   */
  static async open(file: string, options: { durable: boolean }): Promise<{ log: OperationLog; entries: unknown[] }> {
    await mkdir(dirname(file), { recursive: true });
    let content = '';
    try {
      content = await readFile(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    const rawLines = content.split('\n');
    const entries: unknown[] = [];
    let validBytes = 0;
    for (let i = 0; i < rawLines.length; i++) {
      const line = rawLines[i] as string;
      const isLast = i === rawLines.length - 1;
      if (line.length === 0) continue;
      try {
        entries.push(JSON.parse(line));
        validBytes += Buffer.byteLength(line) + 1;
      } catch (error) {
        if (isLast) break;
        throw new Error(`operation log ${file} is damaged at line ${i + 1}: ${(error as Error).message}`, {
          cause: error,
        });
      }
    }
    const handle = await open(file, 'a+');
    if (validBytes < Buffer.byteLength(content)) await handle.truncate(validBytes);
    return { log: new OperationLog(file, options.durable, handle, entries.length), entries };
  }

  get entries(): number {
    return this.lines;
  }

  /** Appends the entries with one write and, when durable, one flush: a batch costs one sync. */
  async append(entries: readonly unknown[]): Promise<void> {
    if (entries.length === 0) return;
    const handle = this.requireOpen();
    await handle.write(entries.map((entry) => `${JSON.stringify(entry)}\n`).join(''));
    if (this.durable) await handle.datasync();
    this.lines += entries.length;
  }

  /** Empties the log, once a snapshot holds everything it held. */
  async clear(): Promise<void> {
    const handle = this.requireOpen();
    await handle.truncate(0);
    if (this.durable) await handle.datasync();
    this.lines = 0;
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
