import { appendFile, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ValidationError } from '@hopline/contracts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
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
});
