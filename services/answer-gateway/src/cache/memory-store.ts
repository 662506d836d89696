import type { AnswerCacheStore } from './answer-cache.js';

interface Entry {
  value: Uint8Array;
  expiresAt: number;
}

/**
 * The answer cache of a single instance: a least-recently-used map with a time to live. Kb
 * versions are counters in the same process; they start over with the (then empty) cache.
 */
export class MemoryCacheStore implements AnswerCacheStore {
  readonly kind = 'memory';
  // A Map iterates in insertion order: re-inserting on every hit keeps the oldest use first.
  private readonly entries = new Map<string, Entry>();
  private readonly versions = new Map<string, number>();

  constructor(
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {}

  get keepsNothing(): boolean {
    return this.maxEntries === 0;
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: string): Promise<Uint8Array | undefined> {
    const entry = this.entries.get(key);
    if (!entry) return Promise.resolve(undefined);
    this.entries.delete(key);
    if (entry.expiresAt <= this.now()) return Promise.resolve(undefined);
    this.entries.set(key, entry);
    return Promise.resolve(entry.value);
  }

  set(key: string, value: Uint8Array, ttlMs: number): Promise<void> {
    this.entries.delete(key);
    this.entries.set(key, { value, expiresAt: this.now() + ttlMs });
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.entries.delete(oldest.value);
    }
    return Promise.resolve();
  }

  kbVersions(tenantId: string, kbIds: readonly string[]): Promise<string[]> {
    return Promise.resolve(kbIds.map((kbId) => String(this.versions.get(versionKey(tenantId, kbId)) ?? 0)));
  }

  bumpKbVersion(tenantId: string, kbId: string): Promise<void> {
    const key = versionKey(tenantId, kbId);
    this.versions.set(key, (this.versions.get(key) ?? 0) + 1);
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.entries.clear();
    return Promise.resolve();
  }
}

// Tenant and kb ids are subject tokens (no "/"), so the pair cannot collide.
const versionKey = (tenantId: string, kbId: string) => `${tenantId}/${kbId}`;
