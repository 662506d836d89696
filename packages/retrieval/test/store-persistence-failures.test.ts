import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { IndexSnapshot } from '../src/storage/store-snapshot.js';
import { VersionedDocumentStore, type ItemCodec } from '../src/storage/versioned-document-store.js';

const codec: ItemCodec<string> = {
  encode: (item) => item,
  decode: (value) => {
    if (typeof value !== 'string') throw new Error('not a string item');
    return value;
  },
};
const listener = { added() {}, removed() {}, restored() {} };
const doc = (docId: string) => ({ tenantId: 't1', kbId: 'kb1', docId, version: 1 });

describe('versioned document store: writes it cannot keep as it means to', () => {
  let dir: string;
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('store - a write that comes while the store closes is either kept across the restart or refused, never acknowledged and lost', async () => {
    dir = await mkdtemp(join(tmpdir(), 'hopline-close-race-'));
    let late: Promise<unknown> | undefined;
    // The index's save writes into the store it is part of, opened below.
    const opened: { store?: VersionedDocumentStore<string> } = {};
    const index: IndexSnapshot = {
      async save() {
        // The write a consumer's in-flight batch makes while the store is closing.
        late ??= (opened.store as VersionedDocumentStore<string>).upsert(doc('b'), ['late chunk']).then(
          (outcome) => ({ outcome }),
          (error: unknown) => ({ error }),
        );
        // Not awaited alone: a store that queues the write behind its snapshot must not deadlock here.
        await Promise.race([late, new Promise((resolve) => setTimeout(resolve, 200))]);
      },
      load: async () => true,
    };
    const files = { log: join(dir, 'log.jsonl'), snapshot: join(dir, 'snapshot'), index };
    const store = await VersionedDocumentStore.open({ files, codec, listener, durable: false });
    opened.store = store;
    await store.upsert(doc('a'), ['first chunk']);
    await store.close();
    const written = (await late) as { outcome?: string; error?: unknown };

    const reopened = await VersionedDocumentStore.open({ files, codec, listener, durable: false });
    try {
      // Either the late write was refused (so its delivery is retried), or it is kept.
      if (written.outcome === 'applied') expect(reopened.state(doc('b'))?.version).toBe(1);
      else expect(written.error).toBeDefined();
    } finally {
      await reopened.close();
    }
  });

  it('store - a write that calls for a snapshot the disk refuses still stands: reported, kept in the log, there after a restart', async () => {
    dir = await mkdtemp(join(tmpdir(), 'hopline-snapshot-failure-'));
    let diskFull = true;
    const index: IndexSnapshot = {
      async save() {
        if (diskFull) throw new Error('ENOSPC: no space left on device');
      },
      load: async () => true,
    };
    const failures: unknown[] = [];
    const files = {
      log: join(dir, 'log.jsonl'),
      snapshot: join(dir, 'snapshot'),
      index,
      snapshotAfter: 2,
      onSnapshotFailed: (error: unknown) => failures.push(error),
    };
    const store = await VersionedDocumentStore.open({ files, codec, listener, durable: false });
    expect(await store.upsert(doc('a'), ['a chunk'])).toBe('applied');
    expect(await store.upsert(doc('b'), ['b chunk'])).toBe('applied');
    expect(await store.upsert(doc('c'), ['c chunk'])).toBe('applied');
    expect(failures.map((error) => (error as Error).message)).toEqual([
      'ENOSPC: no space left on device',
      'ENOSPC: no space left on device',
    ]);
    diskFull = false;
    await store.close();
    const reopened = await VersionedDocumentStore.open({ files, codec, listener, durable: false });
    try {
      expect(['a', 'b', 'c'].map((id) => reopened.state(doc(id))?.version)).toEqual([1, 1, 1]);
    } finally {
      await reopened.close();
    }
  });
});
