import type * as NodeFs from 'node:fs/promises';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

/** What reached the disk, in order: each flush, truncate and rename, by path under the data folder. */
const disk = vi.hoisted(() => ({ root: '', events: [] as string[] }));
vi.mock('node:fs/promises', async (importOriginal) => {
  const fs = await importOriginal<typeof NodeFs>();
  const named = (path: unknown) => relative(disk.root, String(path)) || '.';
  const recorded = <Args extends unknown[], Result>(
    event: string,
    call: (...args: Args) => Promise<Result>,
  ): ((...args: Args) => Promise<Result>) => {
    return async (...args) => {
      const result = await call(...args);
      disk.events.push(event);
      return result;
    };
  };
  return {
    ...fs,
    open: async (...args: Parameters<typeof NodeFs.open>) => {
      const handle = await fs.open(...args);
      const path = named(args[0]);
      // A flush is a flush, whether of the data alone or of the metadata too.
      handle.sync = recorded(`sync ${path}`, handle.sync.bind(handle));
      handle.datasync = recorded(`sync ${path}`, handle.datasync.bind(handle));
      handle.truncate = recorded(`truncate ${path}`, handle.truncate.bind(handle));
      return handle;
    },
    rename: (from: string, to: string) => recorded(`rename ${named(from)} ${named(to)}`, fs.rename)(from, to),
  };
});

const { EmbeddedLexicalBackend, EmbeddedVectorBackend, HashingEmbedder, HnswVectorIndex } =
  await import('../src/index.js');
const { chunkOf } = await import('./fixtures.js');

const embedder = new HashingEmbedder({ dimensions: 16 });

beforeEach(async () => {
  disk.root = await mkdtemp(join(tmpdir(), 'hopline-durable-'));
  disk.events.length = 0;
});

afterEach(async () => {
  await rm(disk.root, { recursive: true, force: true });
});

/**
 * Writes a version of two documents to each side and closes them, which takes their snapshots;
 * each side in a folder of its own, as a worker keeps them.
 */
async function writeAndClose(durable: boolean, version: number): Promise<void> {
  const lexical = await EmbeddedLexicalBackend.open({ dataDir: join(disk.root, 'bm25'), durable });
  // HNSW from the first vector, so the snapshot holds hnswlib's own files too.
  const vector = await EmbeddedVectorBackend.open({
    dimensions: embedder.dimensions,
    dataDir: join(disk.root, 'vectors'),
    durable,
    createIndex: (dimensions) => new HnswVectorIndex(dimensions),
  });
  for (const docId of ['harbour', 'ledger']) {
    const doc = { tenantId: 't1', kbId: 'kb1', docId, version };
    const chunk = chunkOf({ docId, docVersion: version, text: `${docId} ${version}` });
    await lexical.upsertDocument(doc, [chunk]);
    await vector.upsertDocument(doc, [{ chunk, vector: embedder.embedOne(chunk.text) }]);
  }
  await Promise.all([lexical.close(), vector.close()]);
}

describe('snapshot durability', () => {
  it.each([
    ['bm25', 'lexical', ['bm25.bin', 'bm25.json']],
    ['vectors', 'vector', ['graph-0.hnsw', 'hnsw.json']],
  ])(
    'durable: every file of the new snapshot in %s, its folder and the renames are flushed before the log is cleared',
    async (folder, side, indexFiles) => {
      const snapshot = join(folder, `${side}.snapshot`);
      // The first snapshot has no folder before it; the second moves one aside.
      for (const version of [1, 2]) {
        disk.events.length = 0;
        await writeAndClose(true, version);
        const files = await readdir(join(disk.root, snapshot));
        expect(files).toEqual(expect.arrayContaining(['documents.jsonl', 'items.bin', 'manifest.json', ...indexFiles]));
        const cleared = disk.events.lastIndexOf(`truncate ${join(folder, `${side}.log.jsonl`)}`);
        const swapped = disk.events.indexOf(`rename ${snapshot}.next ${snapshot}`);
        const flushed = (path: string) => disk.events.indexOf(`sync ${path}`);
        // Every file and the names in the folder before the rename makes the folder the snapshot,
        // so a power cut never leaves one that names a file it does not hold whole.
        for (const path of [...files.map((file) => join(`${snapshot}.next`, file)), `${snapshot}.next`]) {
          expect(flushed(path), path).toBeGreaterThan(-1);
          expect(flushed(path), path).toBeLessThan(swapped);
        }
        if (version === 2) expect(disk.events).toContain(`rename ${snapshot} ${snapshot}.old`);
        // The renames, in the folder that holds the snapshot, before the log is cleared.
        const renamesFlushed = disk.events.indexOf(`sync ${folder}`, swapped);
        expect(renamesFlushed).toBeGreaterThan(swapped);
        expect(renamesFlushed).toBeLessThan(cleared);
      }
    },
  );

  it('not durable: nothing is flushed, the snapshots included', async () => {
    await writeAndClose(false, 1);
    await writeAndClose(false, 2);
    expect(disk.events.filter((event) => event.startsWith('sync '))).toEqual([]);
    expect(disk.events).toContain('rename vectors/vector.snapshot.next vectors/vector.snapshot');
  });
});
