import { execFileSync } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { appendFile, mkdtemp, open, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ValidationError } from '@hopline/contracts';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createFileKeyValueStore } from '../src/index.js';

const text = (value: string) => new TextEncoder().encode(value);
const read = (bytes: Uint8Array | undefined) => (bytes === undefined ? undefined : new TextDecoder().decode(bytes));

describe('file key-value store (a log file)', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'hopline-kv-'));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('file kv - a value survives a new store over the same folder, the last put wins', async () => {
    const dir = join(root, 'traces');
    const first = createFileKeyValueStore(dir);
    await first.put('q-1', text('v1'));
    await first.put('q-1', text('v2'));
    await first.close();
    const second = createFileKeyValueStore(dir);
    expect(read(await second.get('q-1'))).toBe('v2');
    await second.close();
    expect(await readdir(dir)).toEqual(['.values.log']);
  });

  it('file kv - puts of one turn are read back each, the later of one key winning', async () => {
    const dir = join(root, 'traces');
    const store = createFileKeyValueStore(dir);
    await Promise.all([store.put('a', text('a1')), store.put('b', text('b1')), store.put('a', text('a2'))]);
    expect([read(await store.get('a')), read(await store.get('b'))]).toEqual(['a2', 'b1']);
    await store.close();
    const reopened = createFileKeyValueStore(dir);
    expect([read(await reopened.get('a')), read(await reopened.get('b'))]).toEqual(['a2', 'b1']);
    await reopened.close();
  });

  it('file kv - conditional puts racing on one key, with plain puts between: the value that must stay is never overwritten', async () => {
    const store = createFileKeyValueStore(join(root, 'traces'));
    const keepsNewer = (mine: number) => (stored: Uint8Array) => Number(read(stored)) > mine;
    const keys = Array.from({ length: 20 }, (_, i) => `q-${i}`);
    const written = await Promise.all(
      keys.flatMap((key) => [
        store.put(key, text('0')).then(() => 'put'),
        store.putUnless(key, text('2'), keepsNewer(2)),
        store.putUnless(key, text('1'), keepsNewer(1)),
      ]),
    );
    expect(written).toEqual(keys.flatMap(() => ['put', true, false]));
    expect(await Promise.all(keys.map(async (key) => read(await store.get(key))))).toEqual(keys.map(() => '2'));
    await store.close();
  });

  it('file kv - a put is written on the event loop, not queued behind a busy thread pool', async () => {
    const store = createFileKeyValueStore(join(root, 'traces'));
    await store.put('opened', text('before'));
    // Each open of a FIFO with no writer holds a thread of the pool until one comes.
    const fifo = join(root, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const poolSize = Number(process.env.UV_THREADPOOL_SIZE ?? 4);
    const held = Array.from({ length: poolSize }, () => open(fifo, 'r'));
    try {
      const outcome = await Promise.race([
        store.put('q-1', text('v1')).then(() => 'written'),
        new Promise((resolve) => setTimeout(resolve, 2_000, 'waiting for the pool')),
      ]);
      expect(outcome).toBe('written');
    } finally {
      // A writer releases every held open; then nothing is left waiting.
      const writer = openSync(fifo, 'w');
      for (const handle of await Promise.all(held)) await handle.close();
      closeSync(writer);
    }
    expect(read(await store.get('q-1'))).toBe('v1');
    await store.close();
  });

  it('file kv - a record cut short by a crash is dropped, and puts after it are read', async () => {
    const dir = join(root, 'traces');
    const first = createFileKeyValueStore(dir);
    await first.put('q-1', text('whole'));
    await first.close();
    // A header that promises more value bytes than follow: the process died mid-write.
    const cut = Buffer.alloc(8 + 3 + 2);
    cut.writeUInt32LE(3, 0);
    cut.writeUInt32LE(100, 4);
    cut.write('q-2', 8, 'latin1');
    await appendFile(join(dir, '.values.log'), cut);
    const second = createFileKeyValueStore(dir);
    expect(await second.get('q-2')).toBeUndefined();
    await second.put('q-3', text('after'));
    await second.close();
    const third = createFileKeyValueStore(dir);
    expect([read(await third.get('q-1')), read(await third.get('q-3'))]).toEqual(['whole', 'after']);
    await third.close();
  });

  it('file kv - a log more superseded than live is rewritten at open with the live values only', async () => {
    const dir = join(root, 'traces');
    const big = (fill: string) => text(fill.repeat(512 * 1024));
    const first = createFileKeyValueStore(dir);
    for (const fill of ['a', 'b', 'c']) await first.put('q-1', big(fill));
    await first.put('q-2', text('small'));
    await first.close();
    const before = (await stat(join(dir, '.values.log'))).size;
    const second = createFileKeyValueStore(dir);
    expect(read(await second.get('q-2'))).toBe('small');
    expect((await stat(join(dir, '.values.log'))).size).toBeLessThan(before / 2);
    expect(read(await second.get('q-1'))).toBe('c'.repeat(512 * 1024));
    await second.put('q-2', text('later'));
    await second.close();
    const third = createFileKeyValueStore(dir);
    expect(read(await third.get('q-2'))).toBe('later');
    await third.close();
    expect(await readdir(dir)).toEqual(['.values.log']);
  });

  it('file kv - values stored one file per key, before the log, are still read', async () => {
    const dir = join(root, 'kbs');
    const store = createFileKeyValueStore(dir);
    await store.put('new', text('in the log'));
    await writeFile(join(dir, encodeURIComponent('dev/old')), text('a file'));
    expect([read(await store.get('new')), read(await store.get('dev/old'))]).toEqual(['in the log', 'a file']);
    await store.close();
  });

  it('file kv - a missing key, or a folder not created yet, reads as undefined', async () => {
    const store = createFileKeyValueStore(join(root, 'never-written'));
    expect(await store.get('q-1')).toBeUndefined();
    await store.close();
  });

  it('file kv - a key with slashes and dots stays one file inside the folder', async () => {
    const dir = join(root, 'traces');
    const store = createFileKeyValueStore(dir);
    await store.put('a/../../escape', text('contained'));
    expect(read(await store.get('a/../../escape'))).toBe('contained');
    await store.close();
    expect(await readdir(root)).toEqual(['traces']);
    expect(await readdir(dir)).toEqual(['.values.log']);
  });

  it('file kv - keys JetStream KV would refuse are refused here too', async () => {
    const store = createFileKeyValueStore(root);
    await expect(store.put('..', text(''))).rejects.toBeInstanceOf(ValidationError);
    await expect(store.put('with space', text(''))).rejects.toBeInstanceOf(ValidationError);
    await expect(store.get('x'.repeat(201))).rejects.toBeInstanceOf(ValidationError);
    await store.close();
  });
  describe('with retention limits (the embedded traces)', () => {
    /** An hour's age limit and no bytes limit: the tests that date a generation back. */
    const byAge = { maxAgeMs: 3_600_000, maxBytes: 0 };
    /** Dates the current generation's start back, as if the store had been running that long. */
    const ageGeneration = async (dir: string, ms: number) => {
      const then = new Date(Date.now() - ms);
      await utimes(join(dir, '.generation'), then, then);
    };

    it('file kv - past half the age the log becomes the previous generation, still read; a restart does not extend it', async () => {
      const dir = join(root, 'traces');
      const first = createFileKeyValueStore(dir, byAge);
      await first.put('q-old', text('old'));
      await first.close();
      await ageGeneration(dir, 40 * 60_000);
      const second = createFileKeyValueStore(dir, byAge);
      expect(read(await second.get('q-old'))).toBe('old');
      await second.put('q-new', text('new'));
      await second.close();
      expect((await readdir(dir)).sort()).toEqual(['.generation', '.values.log', '.values.previous.log']);
      // Reopened before the new generation is due: nothing moves.
      const third = createFileKeyValueStore(dir, byAge);
      expect([read(await third.get('q-old')), read(await third.get('q-new'))]).toEqual(['old', 'new']);
      await third.close();
      await ageGeneration(dir, 40 * 60_000);
      const fourth = createFileKeyValueStore(dir, byAge);
      expect(await fourth.get('q-old')).toBeUndefined();
      expect(read(await fourth.get('q-new'))).toBe('new');
      await fourth.close();
    });

    it('file kv - a store closed for longer than the age starts without the values that aged out while it was closed', async () => {
      const dir = join(root, 'traces');
      const first = createFileKeyValueStore(dir, byAge);
      await first.put('q-1', text('written'));
      await first.close();
      // Everything in the generation was put in its first half hour, so at least an hour ago.
      await ageGeneration(dir, 90 * 60_000);
      const second = createFileKeyValueStore(dir, byAge);
      expect(await second.get('q-1')).toBeUndefined();
      await second.put('q-2', text('fresh'));
      expect(read(await second.get('q-2'))).toBe('fresh');
      await second.close();
      expect(await readdir(dir)).not.toContain('.values.previous.log');
    });

    it('file kv - the bytes limit rotates the log: the newest values are read, the oldest are gone, the files stay near the limit', async () => {
      const dir = join(root, 'traces');
      const maxBytes = 4096;
      const store = createFileKeyValueStore(dir, { maxAgeMs: 0, maxBytes });
      const value = (n: number) => text(String(n).padStart(100, '.'));
      for (let n = 0; n < 200; n++) await store.put(`q-${n}`, value(n));
      expect(read(await store.get('q-199'))).toBe(read(value(199)));
      expect(read(await store.get('q-180'))).toBe(read(value(180)));
      expect(await store.get('q-0')).toBeUndefined();
      await store.close();
      const sizes = await Promise.all(
        ['.values.log', '.values.previous.log'].map(async (file) => (await stat(join(dir, file))).size),
      );
      // Each generation stops taking puts at half the limit: one record past it at most.
      expect(sizes.reduce((sum, size) => sum + size, 0)).toBeLessThanOrEqual(maxBytes + 2 * 120);
    });

    it('file kv - a quiet store still ages out: nothing put or read, its values are gone from the files', async () => {
      const dir = join(root, 'traces');
      const store = createFileKeyValueStore(dir, { maxAgeMs: 200, maxBytes: 0 });
      await store.put('q-1', text('x'.repeat(64)));
      const bytesOnDisk = async () => {
        const files = await readdir(dir);
        const sizes = await Promise.all(
          files.filter((file) => file.endsWith('.log')).map(async (file) => (await stat(join(dir, file))).size),
        );
        return sizes.reduce((sum, size) => sum + size, 0);
      };
      expect(await bytesOnDisk()).toBeGreaterThan(64);
      // Two rotations by the store's own timer: the value's generation is deleted.
      await vi.waitFor(async () => expect(await bytesOnDisk()).toBe(0), { timeout: 10_000, interval: 50 });
      expect(await store.get('q-1')).toBeUndefined();
      await store.close();
    });

    it('file kv - reads in flight while puts rotate the log settle with the value or, once its generation is gone, none', async () => {
      const dir = join(root, 'traces');
      // 300 records of 103 bytes against generations of 4 KB: a rotation about every 40 puts.
      const store = createFileKeyValueStore(dir, { maxAgeMs: 0, maxBytes: 8 * 1024 });
      const value = (n: number) => `v${n}`.padEnd(90, '.');
      const reads: Promise<[number, number, Uint8Array | undefined]>[] = [];
      const readBack = (n: number, after: number) => reads.push(store.get(`q-${n}`).then((bytes) => [n, after, bytes]));
      for (let n = 0; n < 300; n++) {
        await store.put(`q-${n}`, text(value(n)));
        // Not awaited: these reads are still running when a later put rotates the log.
        readBack(n, n);
        readBack(n - 40, n);
      }
      let gone = 0;
      for (const [n, after, bytes] of await Promise.all(reads)) {
        // The key just put is in the current generation, or the previous one after one rotation.
        if (n === after || bytes !== undefined) expect(read(bytes)).toBe(value(n));
        else gone += 1;
      }
      // Keys 40 puts old are at times in a generation already deleted.
      expect(gone).toBeGreaterThan(0);
      await store.close();
    });
  });
});
