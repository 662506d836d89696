import { mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { OperationLog } from '../src/storage/operation-log.js';

let dataDir: string;
let file: string;
beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'hopline-operation-log-'));
  file = join(dataDir, 'writes.log');
});
afterEach(async () => {
  vi.restoreAllMocks();
  await rm(dataDir, { recursive: true, force: true });
});

async function reopened(): Promise<unknown[]> {
  const { log, entries } = await OperationLog.open(file, { durable: false });
  await log.close();
  return entries;
}

describe('OperationLog', () => {
  it('persistence - a last line without its newline is dropped even when it parses, and the next append starts a line of its own', async () => {
    // A crash part-way through an append can leave an entry's JSON without the newline that
    // ends it: the append never completed, so the entry was never acknowledged.
    await writeFile(file, '{"n":1}\n{"n":2}');
    const { log, entries } = await OperationLog.open(file, { durable: false });
    expect(entries).toEqual([{ n: 1 }]);
    expect(log.entries).toBe(1);
    await log.append([{ n: 3 }]);
    await log.close();
    expect(await readFile(file, 'utf8')).toBe('{"n":1}\n{"n":3}\n');
    expect(await reopened()).toEqual([{ n: 1 }, { n: 3 }]);
  });

  // The disk fills up part-way through an append's write: the write takes some of the bytes and
  // either says so, as write(2) does, or fails with ENOSPC; every later write fails.
  it.each([
    ['reports a short write', false],
    ['fails after writing part', true],
  ])(
    'persistence - an append the disk could take only part of (%s) is cut off again, and the log stays whole',
    async (_disk, failsPartWritten) => {
      const { log } = await OperationLog.open(file, { durable: false });
      await log.append([{ n: 1 }]);
      // The prototype every FileHandle shares, the log's among them.
      const probe = await open(file, 'r');
      await probe.close();
      const fileHandles = Object.getPrototypeOf(probe) as FileHandle;
      const write: (this: FileHandle, buffer: Uint8Array, offset: number, length: number) => Promise<unknown> =
        fileHandles.write;
      const full = () => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      let room = true;
      async function fillingUp(this: FileHandle, data: string | Uint8Array): Promise<unknown> {
        if (!room) throw full();
        room = false;
        const bytes = Buffer.from(data);
        const written = await write.call(this, bytes, 0, bytes.length >> 1);
        if (failsPartWritten) throw full();
        return written;
      }
      // `write` has an overload per kind of data; the stand-in takes both kinds the log may pass.
      vi.spyOn(fileHandles, 'write').mockImplementation(fillingUp as FileHandle['write']);
      await expect(log.append([{ n: 2, text: 'lost to the full disk' }])).rejects.toThrow();
      expect(await readFile(file, 'utf8')).toBe('{"n":1}\n');
      expect(log.entries).toBe(1);

      vi.restoreAllMocks();
      await log.append([{ n: 3 }]);
      await log.close();
      expect(await reopened()).toEqual([{ n: 1 }, { n: 3 }]);
    },
  );
});
