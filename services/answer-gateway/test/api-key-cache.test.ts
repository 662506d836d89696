import type * as NodeCrypto from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';

const hashes = vi.hoisted(() => ({ count: 0 }));
vi.mock('node:crypto', async (importOriginal) => {
  const crypto = await importOriginal<typeof NodeCrypto>();
  return {
    ...crypto,
    createHash: (...args: Parameters<typeof NodeCrypto.createHash>) => {
      hashes.count += 1;
      return crypto.createHash(...args);
    },
  };
});

const { ApiKeyStore, hashApiKey } = await import('../src/api-keys.js');

const entry = (key: string) => ({ keyHash: hashApiKey(key), tenantId: 'acme', userId: 'ana', kbIds: ['handbook'] });

describe('api key store - verified keys', () => {
  it('hashes a known key once, however many requests present it', () => {
    const store = new ApiKeyStore({ keys: [{ ...entry('key-a'), canIngest: false }] });
    hashes.count = 0;
    for (let request = 0; request < 5; request++) expect(store.verify('key-a')?.tenantId).toBe('acme');
    expect(hashes.count).toBe(1);
  });

  it('keeps no unknown key: each is hashed and refused again', () => {
    const store = new ApiKeyStore({ keys: [{ ...entry('key-a'), canIngest: false }] });
    hashes.count = 0;
    expect(store.verify('key-b')).toBeUndefined();
    expect(store.verify('key-b')).toBeUndefined();
    expect(hashes.count).toBe(2);
  });

  it('a key revoked (a store without it) is refused although an earlier store verified it', () => {
    const before = new ApiKeyStore({
      keys: [
        { ...entry('key-a'), canIngest: false },
        { ...entry('key-b'), canIngest: false },
      ],
    });
    expect(before.verify('key-a')).toBeDefined();
    const after = new ApiKeyStore({ keys: [{ ...entry('key-b'), canIngest: false }] });
    expect(after.verify('key-a')).toBeUndefined();
    expect(after.verify('key-b')).toBeDefined();
  });
});
