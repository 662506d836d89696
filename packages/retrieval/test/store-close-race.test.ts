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

describe('versioned document store: a write racing close()', () => {
  let dir: string;
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('store - a write that comes while the store closes is either kept across the restart or refused, never acknowledged and lost', async () => {
    dir = await mkdtemp(join(tmpdir(), 'hopline-close-race-'));
    const doc = (docId: string) => ({ tenantId: 't1', kbId: 'kb1', docId, version: 1 });
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
});
