import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { nuid } from 'nats';
import type { KeyValueStore } from './bus.js';
import { assertValidKey } from './names.js';

/**
 * A KeyValueStore in a folder, one file per key, for the embedded mode: values survive a
 * restart without a NATS server. Keys are checked like JetStream KV keys and then
 * percent-encoded, so a key never names a path outside the folder. A value is written to a
 * temporary file and renamed, so a reader never sees half of it.
 */
export function createFileKeyValueStore(dir: string): KeyValueStore {
  const fileOf = (key: string) => join(dir, encodeURIComponent(key));
  // The folder is made once, by the first put, not again for every value (one per question).
  let folder: Promise<unknown> | undefined;
  return {
    async put(key, value) {
      assertValidKey(key);
      folder ??= mkdir(dir, { recursive: true }).catch((error: unknown) => {
        folder = undefined;
        throw error;
      });
      await folder;
      const file = fileOf(key);
      const partial = `${file}.${nuid.next()}.partial`;
      await writeFile(partial, value);
      await rename(partial, file);
    },
    async get(key) {
      assertValidKey(key);
      try {
        return await readFile(fileOf(key));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw error;
      }
    },
  };
}
