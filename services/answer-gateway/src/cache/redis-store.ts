import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { AnswerCacheStore } from './answer-cache.js';

export interface RedisCacheStoreOptions {
  /** Longest a cache command may take; a slow Redis must not slow the questions. */
  commandTimeoutMs?: number;
  /** Connection trouble; commands meanwhile fail fast and count as cache misses. */
  onConnectionError?: (error: Error) => void;
}

/**
 * The answer cache shared by all gateway instances. A kb's version is a random token in Redis
 * rather than a counter in each instance, so that instances agree on it and a restarted
 * instance, or a version key that Redis evicted, can never bring an old version back: a
 * missing token is replaced by a fresh one, which matches no earlier entry.
 */
export class RedisCacheStore implements AnswerCacheStore {
  readonly kind = 'redis';

  private constructor(private readonly redis: Redis) {}

  static async connect(url: string, options: RedisCacheStoreOptions = {}): Promise<RedisCacheStore> {
    const redis = new Redis(url, {
      lazyConnect: true,
      // Fail a command at once while disconnected instead of queueing it behind a reconnect.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      commandTimeout: options.commandTimeoutMs ?? 250,
    });
    // Without a listener, ioredis's error event would crash the process on a Redis restart.
    redis.on('error', (error: Error) => options.onConnectionError?.(error));
    await redis.connect();
    return new RedisCacheStore(redis);
  }

  async get(key: string): Promise<Uint8Array | undefined> {
    return (await this.redis.getBuffer(key)) ?? undefined;
  }

  async set(key: string, value: Uint8Array, ttlMs: number): Promise<void> {
    await this.redis.set(key, Buffer.from(value.buffer, value.byteOffset, value.byteLength), 'PX', ttlMs);
  }

  async kbVersions(tenantId: string, kbIds: readonly string[]): Promise<string[]> {
    if (kbIds.length === 0) return [];
    const keys = kbIds.map((kbId) => versionKey(tenantId, kbId));
    const versions = await this.redis.mget(...keys);
    const missing = keys.filter((_, index) => versions[index] === null);
    if (missing.length === 0) return versions as string[];
    // SET NX: when two instances race, one token wins and both read it back.
    const pipeline = this.redis.pipeline();
    for (const key of missing) pipeline.set(key, randomUUID(), 'NX');
    await pipeline.exec();
    const settled = await this.redis.mget(...keys);
    return settled.map((version, index) => {
      if (version === null) throw new Error(`kb version ${keys[index] ?? ''} vanished while being set`);
      return version;
    });
  }

  async bumpKbVersion(tenantId: string, kbId: string): Promise<void> {
    await this.redis.set(versionKey(tenantId, kbId), randomUUID());
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}

const versionKey = (tenantId: string, kbId: string) => `hopline:kbversion:${tenantId}:${kbId}`;
