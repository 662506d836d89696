import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addApiKey, ApiKeyStore, bearerToken, generateApiKey, hashApiKey } from '../src/api-keys.js';

const entry = (key: string) => ({ keyHash: hashApiKey(key), tenantId: 'acme', userId: 'ana', kbIds: ['handbook'] });

describe('api keys', () => {
  it('verifies a presented key against its stored SHA-256 hash and yields its principal', () => {
    const key = generateApiKey();
    const store = ApiKeyStore.parse(JSON.stringify({ keys: [entry(key)] }), 'test');
    expect(store.verify(key)).toMatchObject({ tenantId: 'acme', userId: 'ana', kbIds: ['handbook'], canIngest: false });
    expect(store.verify(key)?.keyId).toBe(hashApiKey(key).slice(7, 19));
    expect(store.verify(`${key}x`)).toBeUndefined();
    expect(store.verify(hashApiKey(key))).toBeUndefined();
  });

  it('reads keys from API_KEYS_FILE before API_KEYS, and refuses to start without either', () => {
    const fileKey = generateApiKey();
    const envKey = generateApiKey();
    const path = join(mkdtempSync(join(tmpdir(), 'hopline-keys-')), 'keys.json');
    writeFileSync(path, JSON.stringify({ keys: [entry(fileKey)] }));
    const fromFile = ApiKeyStore.fromConfig({
      API_KEYS_FILE: path,
      API_KEYS: JSON.stringify({ keys: [entry(envKey)] }),
    });
    expect(fromFile.verify(fileKey)).toBeDefined();
    expect(fromFile.verify(envKey)).toBeUndefined();
    expect(
      ApiKeyStore.fromConfig({ API_KEYS: JSON.stringify({ keys: [entry(envKey)] }) }).verify(envKey),
    ).toBeDefined();
    expect(() => ApiKeyStore.fromConfig({})).toThrow(/no API keys/);
  });

  it('names the first problem of an invalid keys document', () => {
    expect(() => ApiKeyStore.parse('{', 'keys.json')).toThrow(/keys.json: not valid JSON/);
    expect(() =>
      ApiKeyStore.parse(JSON.stringify({ keys: [{ ...entry('k'), keyHash: 'plain-text-key' }] }), 'keys.json'),
    ).toThrow(/keys.0.keyHash/);
    expect(() =>
      ApiKeyStore.parse(JSON.stringify({ keys: [{ ...entry('k'), tenantId: 'a.b' }] }), 'keys.json'),
    ).toThrow(/keys.0.tenantId/);
    // A user id travels in a NATS header, which trims its ends: "ana " would read back as "ana".
    for (const userId of ['', 'ana ', ' ana', 'an\na', 'an\u0000a', 'a'.repeat(129)]) {
      expect(() => ApiKeyStore.parse(JSON.stringify({ keys: [{ ...entry('k'), userId }] }), 'keys.json')).toThrow(
        /keys.0.userId/,
      );
    }
    for (const userId of ['ana@example.com', 'Ana Lima', 'a']) {
      expect(
        ApiKeyStore.parse(JSON.stringify({ keys: [{ ...entry('k'), userId }] }), 'keys.json').verify('k'),
      ).toMatchObject({
        userId,
      });
    }
    expect(() => ApiKeyStore.parse(JSON.stringify({ keys: [{ ...entry('k'), kbIds: [] }] }), 'keys.json')).toThrow(
      /keys.0.kbIds/,
    );
    expect(() => ApiKeyStore.parse(JSON.stringify({ keys: [{ ...entry('k'), admin: true }] }), 'keys.json')).toThrow(
      /admin/,
    );
  });

  it('reads only well-formed bearer tokens', () => {
    expect(bearerToken('Bearer abc')).toBe('abc');
    expect(bearerToken('bearer   abc  ')).toBe('abc');
    expect(bearerToken('Basic abc')).toBeUndefined();
    expect(bearerToken('Bearer a b')).toBeUndefined();
    expect(bearerToken(undefined)).toBeUndefined();
  });

  it('api-key - a new key is added to a keys file by its hash only, and the gateway accepts it', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'hopline-keys-')), 'api-keys.json');
    const first = addApiKey(file, { tenantId: 'acme', userId: 'ops', kbIds: ['handbook'], canIngest: true });
    const second = addApiKey(file, { tenantId: 'globex', userId: 'gus', kbIds: ['wiki'] });
    expect(first).not.toBe(second);
    expect(statSync(file).mode & 0o077).toBe(0);
    const store = ApiKeyStore.fromFile(file);
    expect(store.verify(first)).toMatchObject({ tenantId: 'acme', canIngest: true });
    expect(store.verify(second)).toMatchObject({ tenantId: 'globex', canIngest: false });
    expect(readFileSync(file, 'utf8')).not.toContain(first);
    expect(() => addApiKey(file, { tenantId: 'bad tenant', userId: 'x', kbIds: ['wiki'] })).toThrow(/tenantId/);
  });
});
