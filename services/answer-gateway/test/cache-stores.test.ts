import { spawn } from 'node:child_process';
import { DEFAULT_OPERATOR_CONTROLS, type Done__Output } from '@hopline/contracts';
import { freePort, waitFor } from '@hopline/test-support';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { AnswerCache, normaliseQuestion } from '../src/cache/answer-cache.js';
import { MemoryCacheStore } from '../src/cache/memory-store.js';
import { RedisCacheStore } from '../src/cache/redis-store.js';
import { findRedis } from './support/redis.js';

const redis = await findRedis();

const done = (answer: string, overrides: Partial<Done__Output> = {}): Done__Output => ({
  answer,
  citations: [
    {
      index: 1,
      chunkId: 'c1',
      docId: 'd1',
      kbId: 'handbook',
      title: 'Handbook',
      docVersion: 1,
      span: { start: 0, end: 9 },
      snippet: 'text',
      hop: 1,
      bridgeEntity: '',
    },
  ],
  stopReason: 'SUFFICIENT',
  hops: 1,
  timings: { analyzeMs: 1, retrieveMs: 2, rerankMs: 3, reasonMs: 4, synthesizeMs: 5, totalMs: 15 },
  route: 'SINGLE',
  abstained: false,
  degraded: false,
  degradedReasons: [],
  llmCalls: 0,
  tokens: 0,
  cached: false,
  ...overrides,
});

const QUESTION_ID = 'a1b2c3d4-0000-4000-8000-000000000001';
/** An answer as a question computed it: the cache keeps which question that was. */
const answer = (text: string, overrides: Partial<Done__Output> = {}) => ({
  questionId: QUESTION_ID,
  done: done(text, overrides),
});

const scope = { tenantId: 'acme', userId: 'ana', kbIds: ['handbook'] };
const reasoning = { maxHops: 3, ...DEFAULT_OPERATOR_CONTROLS };

describe('answer cache keys', () => {
  it('normalises case, width, spacing and closing punctuation of a question', () => {
    expect(normaliseQuestion('  Who  OWNS\tAtlas？ ')).toBe('who owns atlas');
    expect(normaliseQuestion('ＡＢＣ 部门是什么。')).toBe('abc 部门是什么');
    expect(normaliseQuestion('Who owns Atlas')).not.toBe(normaliseQuestion('Who owns Atlantis'));
    // Width only: a superscript, a subscript or a circled digit is another question's character.
    expect(normaliseQuestion('What is 10³ in binary?')).not.toBe(normaliseQuestion('What is 103 in binary?'));
    expect(normaliseQuestion('Is H₂O listed in ②?')).not.toBe(normaliseQuestion('Is H2O listed in 2?'));
  });

  it('keys by the hop budget and the operators’ controls in force: multi-hop off or another hop cap is another entry', async () => {
    const cache = new AnswerCache(new MemoryCacheStore(10), { ttlMs: 60_000 });
    const keys = await Promise.all(
      [
        reasoning,
        { ...reasoning, maxHops: 2 },
        { ...reasoning, multiHop: false },
        { ...reasoning, hopCap: 2 },
        { ...reasoning },
      ].map((each) => cache.keyFor(scope, 'Who owns Atlas?', each)),
    );
    expect(new Set(keys.slice(0, 4)).size).toBe(4);
    expect(keys[4]).toBe(keys[0]);
  });

  it('has no key for a scope without a user, a tenant or a kb: such entries never match', async () => {
    const cache = new AnswerCache(new MemoryCacheStore(10), { ttlMs: 60_000 });
    expect(await cache.keyFor({ ...scope, userId: '' }, 'q', reasoning)).toBeUndefined();
    expect(await cache.keyFor({ ...scope, tenantId: '' }, 'q', reasoning)).toBeUndefined();
    expect(await cache.keyFor({ ...scope, kbIds: [] }, 'q', reasoning)).toBeUndefined();
    expect(await cache.keyFor(scope, 'q', reasoning)).toMatch(/^hopline:answer:[0-9a-f]{64}$/);
  });

  it('has no key over a store that keeps nothing (size 0): no kb versions read, no answer encoded', async () => {
    const store = new MemoryCacheStore(0);
    let versionReads = 0;
    const kbVersions = store.kbVersions.bind(store);
    store.kbVersions = (...args) => {
      versionReads += 1;
      return kbVersions(...args);
    };
    const cache = new AnswerCache(store, { ttlMs: 60_000 });
    expect(await cache.keyFor(scope, 'Who owns Atlas?', reasoning)).toBeUndefined();
    expect(versionReads).toBe(0);
  });

  it('after changes may have been missed (the bus reconnected), no answer keyed before over a kb asked about here is served: each such kb is bumped first', async () => {
    const store = new MemoryCacheStore(10);
    const cache = new AnswerCache(store, { ttlMs: 60_000 });
    const before = (await cache.keyFor(scope, 'Who owns Atlas?', reasoning)) ?? '';
    await cache.put(before, answer('Dana Reyes [1]'));
    const otherTenant = { ...scope, tenantId: 'globex' };
    const untouched = await cache.keyFor(otherTenant, 'Who owns Atlas?', reasoning);

    cache.changesMayHaveBeenMissed();
    const after = await cache.keyFor(scope, 'Who owns Atlas?', reasoning);
    expect(after).not.toBe(before);
    expect(await cache.get(after ?? '')).toBeUndefined();
    // Bumped once, not on every lookup after.
    expect(await cache.keyFor(scope, 'Who owns Atlas?', reasoning)).toBe(after);
    // Every kb asked about through this cache is bumped, another tenant's as well.
    expect(await cache.keyFor(otherTenant, 'Who owns Atlas?', reasoning)).not.toBe(untouched);
  });

  it('round-trips an answer, marking the copy it serves as cached', async () => {
    const cache = new AnswerCache(new MemoryCacheStore(10), { ttlMs: 60_000 });
    const key = (await cache.keyFor(scope, 'Who owns Atlas?', reasoning)) ?? '';
    expect(await cache.put(key, answer('Dana Reyes [1]'))).toBe(true);
    expect(await cache.get(key)).toEqual({
      questionId: QUESTION_ID,
      done: { ...done('Dana Reyes [1]'), cached: true },
    });
    expect(await cache.put(key, answer('again', { cached: true }))).toBe(false);
  });
});

describe('MemoryCacheStore', () => {
  it('evicts the least recently used entry beyond its size', async () => {
    const store = new MemoryCacheStore(2);
    const bytes = (text: string) => new TextEncoder().encode(text);
    await store.set('a', bytes('a'), 60_000);
    await store.set('b', bytes('b'), 60_000);
    await store.get('a');
    await store.set('c', bytes('c'), 60_000);
    expect(await store.get('b')).toBeUndefined();
    expect(await store.get('a')).toBeDefined();
    expect(await store.get('c')).toBeDefined();
    expect(store.size).toBe(2);
  });

  it('keeps nothing at size 0, so every question runs', async () => {
    const store = new MemoryCacheStore(0);
    await store.set('a', new Uint8Array([1]), 60_000);
    expect(await store.get('a')).toBeUndefined();
    expect(store.size).toBe(0);
  });

  it('expires entries after their time to live', async () => {
    let now = 0;
    const store = new MemoryCacheStore(10, () => now);
    await store.set('a', new Uint8Array([1]), 1_000);
    now = 999;
    expect(await store.get('a')).toBeDefined();
    now = 1_000;
    expect(await store.get('a')).toBeUndefined();
  });
});

describe.skipIf(redis.url === undefined)('RedisCacheStore', () => {
  const tenant = () => `t-${Math.random().toString(36).slice(2)}`;

  it('gives a kb a version token on first sight and a new one on every bump', async () => {
    const store = await RedisCacheStore.connect(redis.url ?? '');
    const tenantId = tenant();
    const [first] = await store.kbVersions(tenantId, ['handbook']);
    expect(await store.kbVersions(tenantId, ['handbook'])).toEqual([first]);
    await store.bumpKbVersion(tenantId, 'handbook');
    const [second] = await store.kbVersions(tenantId, ['handbook']);
    expect(second).not.toBe(first);
    await store.close();
  });

  it('a version key Redis lost comes back as a token no earlier entry was stored under', async () => {
    const store = await RedisCacheStore.connect(redis.url ?? '');
    const admin = new Redis(redis.url ?? '');
    const tenantId = tenant();
    const cache = new AnswerCache(store, { ttlMs: 60_000 });
    const scoped = { ...scope, tenantId };
    const before = (await cache.keyFor(scoped, 'Who owns Atlas?', reasoning)) ?? '';
    await cache.put(before, answer('Dana Reyes [1]'));
    await admin.del(`hopline:kbversion:${tenantId}:handbook`);
    const after = (await cache.keyFor(scoped, 'Who owns Atlas?', reasoning)) ?? '';
    expect(after).not.toBe(before);
    expect(await cache.get(after)).toBeUndefined();
    await admin.quit();
    await store.close();
  });

  it('shares answers and kb versions between two gateway instances', async () => {
    const [one, two] = [await RedisCacheStore.connect(redis.url ?? ''), await RedisCacheStore.connect(redis.url ?? '')];
    const scoped = { ...scope, tenantId: tenant() };
    const [cacheOne, cacheTwo] = [new AnswerCache(one, { ttlMs: 60_000 }), new AnswerCache(two, { ttlMs: 60_000 })];
    await cacheOne.put((await cacheOne.keyFor(scoped, 'q', reasoning)) ?? '', answer('shared'));
    expect((await cacheTwo.get((await cacheTwo.keyFor(scoped, 'q', reasoning)) ?? ''))?.done.answer).toBe('shared');
    await cacheOne.kbChanged(scoped.tenantId, 'handbook');
    expect(await cacheTwo.get((await cacheTwo.keyFor(scoped, 'q', reasoning)) ?? '')).toBeUndefined();
    await one.close();
    await two.close();
  });

  it('a Redis that goes away costs only the cache: lookups miss fast and report the failure', async () => {
    const port = await freePort();
    const server = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    try {
      const url = `redis://127.0.0.1:${port}`;
      const store = await waitFor(() => RedisCacheStore.connect(url).catch(() => undefined), {
        description: 'the spawned redis-server',
      });
      const failures: string[] = [];
      const cache = new AnswerCache(store, { ttlMs: 60_000, onError: (message) => failures.push(message) });
      const key = (await cache.keyFor(scope, 'q', reasoning)) ?? '';
      await cache.put(key, answer('before the outage'));
      expect((await cache.get(key))?.done.answer).toBe('before the outage');

      server.kill('SIGKILL');
      await waitFor(async () => (await cache.keyFor(scope, 'q', reasoning)) === undefined, {
        description: 'lookups to fail',
      });
      expect(await cache.get(key)).toBeUndefined();
      expect(await cache.put(key, answer('during the outage'))).toBe(false);
      expect(failures).toEqual(
        expect.arrayContaining([
          'answer cache: could not read kb versions',
          'answer cache: lookup failed',
          'answer cache: store failed',
        ]),
      );
      await store.close();
    } finally {
      server.kill('SIGKILL');
    }
  });
});

/** A memory store whose version bumps fail while `failing` is set: a store that missed a change. */
class FlakyBumpStore extends MemoryCacheStore {
  failing = false;

  override bumpKbVersion(tenantId: string, kbId: string): Promise<void> {
    return this.failing ? Promise.reject(new Error('store unavailable')) : super.bumpKbVersion(tenantId, kbId);
  }
}

describe('answer cache and a kb change the store missed', () => {
  it('serves no answer over a kb whose version bump failed, until a bump succeeds', async () => {
    const store = new FlakyBumpStore(10);
    const failures: string[] = [];
    const cache = new AnswerCache(store, { ttlMs: 60_000, onError: (message) => failures.push(message) });
    await cache.put((await cache.keyFor(scope, 'q', reasoning)) ?? '', answer('before the change'));

    store.failing = true;
    await expect(cache.kbChanged(scope.tenantId, 'handbook')).rejects.toThrow('store unavailable');
    // Still failing: no key, so nothing stale is served and nothing is stored.
    expect(await cache.keyFor(scope, 'q', reasoning)).toBeUndefined();
    expect(await cache.keyFor({ ...scope, kbIds: ['other'] }, 'q', reasoning)).toBeDefined();

    store.failing = false;
    const key = await cache.keyFor(scope, 'q', reasoning);
    expect(key).toBeDefined();
    expect(await cache.get(key ?? '')).toBeUndefined();
    expect(failures).toContain('answer cache: could not read kb versions');
  });
});
