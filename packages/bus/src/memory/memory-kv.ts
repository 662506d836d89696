import { jetstream } from '@hopline/contracts';
import type { BusKeyValueStore, KeyValueOptions, KeyWatch } from '../bus.js';
import { assertValidKey, assertValidName } from '../names.js';

/** A key-value bucket held by a memory broker; values are copied in and out, as over a wire. */
export class MemoryKeyValueStore implements BusKeyValueStore {
  private readonly values = new Map<string, Uint8Array>();
  private readonly watchers = new Set<{ key: string; onValue: (value: Uint8Array | undefined) => void }>();

  /** The broker-wide bucket with this name, created when missing. */
  static open(buckets: Map<string, MemoryKeyValueStore>, options: KeyValueOptions): MemoryKeyValueStore {
    const bucket = options.bucket ?? jetstream.traceBucket;
    assertValidName(bucket, 'bucket name');
    let store = buckets.get(bucket);
    if (store === undefined) {
      store = new MemoryKeyValueStore();
      buckets.set(bucket, store);
    }
    return store;
  }

  async put(key: string, value: Uint8Array): Promise<void> {
    assertValidKey(key);
    this.values.set(key, new Uint8Array(value));
    // Later, as a server's push would come: never inside the writer's call.
    for (const watcher of this.watchers) {
      if (watcher.key === key)
        queueMicrotask(() => this.watchers.has(watcher) && watcher.onValue(new Uint8Array(value)));
    }
  }

  /** One turn of the event loop from read to write: nothing of this broker's can come between. */
  async putUnless(key: string, value: Uint8Array, keeps: (stored: Uint8Array) => boolean): Promise<boolean> {
    assertValidKey(key);
    const stored = this.values.get(key);
    if (stored !== undefined && keeps(new Uint8Array(stored))) return false;
    await this.put(key, value);
    return true;
  }

  async get(key: string): Promise<Uint8Array | undefined> {
    assertValidKey(key);
    const value = this.values.get(key);
    return value === undefined ? undefined : new Uint8Array(value);
  }

  async watch(key: string, onValue: (value: Uint8Array | undefined) => void): Promise<KeyWatch> {
    assertValidKey(key);
    const watcher = { key, onValue };
    this.watchers.add(watcher);
    onValue(await this.get(key));
    return { stop: () => this.watchers.delete(watcher) };
  }
}
