import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ValidationError } from '@hopline/contracts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFileKeyValueStore } from '../src/index.js';

const text = (value: string) => new TextEncoder().encode(value);
const read = (bytes: Uint8Array | undefined) => (bytes === undefined ? undefined : new TextDecoder().decode(bytes));

describe('file key-value store', () => {
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
    expect(read(await createFileKeyValueStore(dir).get('q-1'))).toBe('v2');
    expect(await readdir(dir)).toEqual(['q-1']);
  });

  it('file kv - a missing key, or a folder not created yet, reads as undefined', async () => {
    expect(await createFileKeyValueStore(join(root, 'never-written')).get('q-1')).toBeUndefined();
  });

  it('file kv - a key with slashes and dots stays one file inside the folder', async () => {
    const dir = join(root, 'traces');
    const store = createFileKeyValueStore(dir);
    await store.put('a/../../escape', text('contained'));
    expect(read(await store.get('a/../../escape'))).toBe('contained');
    expect(await readdir(root)).toEqual(['traces']);
    expect(await readdir(dir)).toHaveLength(1);
  });

  it('file kv - keys JetStream KV would refuse are refused here too', async () => {
    const store = createFileKeyValueStore(root);
    await expect(store.put('..', text(''))).rejects.toBeInstanceOf(ValidationError);
    await expect(store.put('with space', text(''))).rejects.toBeInstanceOf(ValidationError);
    await expect(store.get('x'.repeat(201))).rejects.toBeInstanceOf(ValidationError);
  });
});
