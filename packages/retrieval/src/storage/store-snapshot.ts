import { mkdir, open, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { crc32 } from 'node:zlib';
import { z } from 'zod';
import type { BlobWriter } from './snapshot-blobs.js';

/**
 * A snapshot of a store and its index, in a folder of its own: `documents.jsonl` (every
 * document's live state, one write-log entry each), `items.bin` (the binary parts of the
 * items, such as vectors, which the entries name by offset: see snapshot-blobs.ts), the
 * index's own files, and `manifest.json` written last, with a checksum of the documents. It
 * replaces the folder before it atomically enough for a crash: the new one is written beside (`.next`), the old moved aside (`.old`) and removed only once the new one is
 * in place, so at start-up there is always a whole snapshot or none, never half of one.
 */
export interface IndexSnapshot {
  /** Writes the index's own state into `dir`, beside the store's documents. */
  save(dir: string): Promise<void>;
  /**
   * Loads what `save` wrote, before the store hands the documents to the listener's `restored`;
   * false when it was not loaded (made otherwise than this index makes it: the listener indexes
   * the documents again as they are restored), so that the next close writes the snapshot again
   * and the start after it loads the index rather than rebuilding it once more.
   */
  load(dir: string): Promise<boolean>;
}

const MANIFEST_FILE = 'manifest.json';
const DOCUMENTS_FILE = 'documents.jsonl';
const ITEM_BLOBS_FILE = 'items.bin';
// Format 2 added items.bin, format 3 the documents' checksum, format 4 the items' checksum (a
// reader now takes item bytes, such as a chunk kept as JSON bytes, without validating them
// again), format 5 items of the lexical side as bytes too (its entries of format 4 and older hold
// whole chunks; the vector side's are the same in both); snapshots of formats 1 (items wholly in
// the entries) and 2 still load, their entries checked one by one, and of format 3 with its
// documents checked. The checksums cover what a reader takes without validating it again.
const FORMAT = 5;
const checksumSchema = z.number().int().nonnegative();
const manifestSchema = z.object({
  format: z.union([z.literal(1), z.literal(2), z.literal(3), z.literal(4), z.literal(FORMAT)]),
  documents: z.number().int().nonnegative(),
  itemBytes: z.number().int().nonnegative().optional(),
  checksums: z.object({ documents: checksumSchema, items: checksumSchema.optional() }).optional(),
});
const NEWLINE = 0x0a;
const TEXT_BLOCK_BYTES = 16 * 1024 * 1024;
// Lines written per call: one write per line would make a 100k-document snapshot crawl.
const LINES_PER_WRITE = 512;

/** Finishes a swap that a crash interrupted; says whether a whole snapshot is in `dir`. */
export async function recoverSnapshot(dir: string): Promise<boolean> {
  await rm(`${dir}.next`, { recursive: true, force: true });
  if (!(await exists(join(dir, MANIFEST_FILE))) && (await exists(join(`${dir}.old`, MANIFEST_FILE)))) {
    await rm(dir, { recursive: true, force: true });
    await rename(`${dir}.old`, dir);
  }
  await rm(`${dir}.old`, { recursive: true, force: true });
  return exists(join(dir, MANIFEST_FILE));
}

/**
 * Whether the entries and the item bytes of a snapshot match the checksums they were written
 * with: such parts are the store's own, validated when they were first written, so a reader may
 * take them as they are rather than validate a hundred thousand chunks again.
 */
export interface Verified {
  entries: boolean;
  items: boolean;
}

/**
 * Loads the index and, meanwhile, the documents (hnswlib reads its graphs on another thread),
 * then hands each document entry, in the order written, to `onEntry` with the snapshot's item
 * blobs (empty for a format 1 snapshot) and what of them the checksums verified. Says whether
 * the snapshot is older than what `writeSnapshot` writes (worth rewriting): of an older format,
 * or with an index part the index did not load.
 */
export async function readSnapshot(
  dir: string,
  index: IndexSnapshot,
  onEntry: (raw: unknown, itemBlobs: Buffer, verified: Verified) => void,
): Promise<{ older: boolean }> {
  const manifest = manifestSchema.parse(JSON.parse(await readFile(join(dir, MANIFEST_FILE), 'utf8')));
  const indexLoaded = index.load(dir);
  // Awaited below either way, so that a failed read does not leave the load rejecting unheard.
  const files = Promise.all([
    readFile(join(dir, DOCUMENTS_FILE)),
    manifest.format === 1 ? Buffer.alloc(0) : readFile(join(dir, ITEM_BLOBS_FILE)),
  ]);
  const [[documents, itemBlobs], loaded] = await Promise.all([files, indexLoaded]);
  if (itemBlobs.byteLength !== (manifest.itemBytes ?? 0))
    throw new Error(`snapshot ${dir} lists ${manifest.itemBytes} bytes of items but holds ${itemBlobs.byteLength}`);
  const { checksums } = manifest;
  if (checksums && crc32(documents) !== checksums.documents)
    throw new Error(`snapshot ${dir} does not match its checksums: its documents were changed or damaged`);
  if (checksums?.items !== undefined && crc32(itemBlobs) !== checksums.items)
    throw new Error(`snapshot ${dir} does not match its checksums: its items were changed or damaged`);
  const verified = { entries: checksums !== undefined, items: checksums?.items !== undefined };
  let read = 0;
  for (const block of textBlocks(documents)) {
    for (let start = 0; start < block.length;) {
      let end = block.indexOf('\n', start);
      if (end === -1) end = block.length;
      if (end > start) {
        onEntry(JSON.parse(block.slice(start, end)), itemBlobs, verified);
        read++;
      }
      start = end + 1;
    }
  }
  if (read !== manifest.documents)
    throw new Error(`snapshot ${dir} lists ${manifest.documents} documents but holds ${read}`);
  return { older: manifest.format < FORMAT || !loaded };
}

/**
 * The file as text in blocks of whole lines: one decode per block, each line then a slice of it
 * rather than a string decoded on its own; blocks, since one string cannot hold a snapshot of a
 * million chunks (V8 strings stop at about 512 MB).
 */
function* textBlocks(file: Buffer): Generator<string> {
  for (let start = 0; start < file.byteLength;) {
    const newline =
      start + TEXT_BLOCK_BYTES >= file.byteLength ? -1 : file.lastIndexOf(NEWLINE, start + TEXT_BLOCK_BYTES);
    // A line longer than a block is a block of its own.
    const end = newline >= start ? newline + 1 : nextLineEnd(file, start);
    yield file.toString('utf8', start, end);
    start = end;
  }
}

function nextLineEnd(file: Buffer, start: number): number {
  const newline = file.indexOf(NEWLINE, start);
  return newline === -1 ? file.byteLength : newline + 1;
}

/** Writes the entries (which put their items' binary parts in `itemBlobs` as they are read) and the index. */
export async function writeSnapshot(
  dir: string,
  entries: Iterable<unknown>,
  itemBlobs: BlobWriter,
  index: IndexSnapshot,
  durable: boolean,
): Promise<void> {
  const next = `${dir}.next`;
  await rm(next, { recursive: true, force: true });
  await mkdir(next, { recursive: true });
  const documents = await open(join(next, DOCUMENTS_FILE), 'w');
  const blobs = await open(join(next, ITEM_BLOBS_FILE), 'w');
  let count = 0;
  let itemBytes = 0;
  const checksums = { documents: 0, items: 0 };
  const flush = async (lines: string[]) => {
    const text = Buffer.from(`${lines.join('\n')}\n`);
    await documents.write(text);
    checksums.documents = crc32(text, checksums.documents);
    const bytes = itemBlobs.take();
    await blobs.write(bytes);
    checksums.items = crc32(bytes, checksums.items);
    itemBytes += bytes.byteLength;
  };
  try {
    let lines: string[] = [];
    for (const entry of entries) {
      lines.push(JSON.stringify(entry));
      count++;
      if (lines.length === LINES_PER_WRITE) {
        await flush(lines);
        lines = [];
      }
    }
    if (lines.length > 0) await flush(lines);
  } finally {
    await Promise.all([documents.close(), blobs.close()]);
  }
  await index.save(next);
  await writeFile(
    join(next, MANIFEST_FILE),
    JSON.stringify({ format: FORMAT, documents: count, itemBytes, checksums }),
  );
  // The log is cleared once this returns, so durable means on disk before then: every file of
  // the snapshot (the index's too), the names in its folder, and the renames that put it in
  // place. Otherwise a power cut could leave a folder without its manifest, or the old snapshot
  // without the writes of the cleared log.
  if (durable) await syncFolder(next);
  if (await exists(dir)) await rename(dir, `${dir}.old`);
  await rename(next, dir);
  if (durable) await syncPath(dirname(dir));
  await rm(`${dir}.old`, { recursive: true, force: true });
}

/** Flushes every file in the folder (a snapshot's holds files only), then the folder's own entries. */
async function syncFolder(dir: string): Promise<void> {
  const files = await readdir(dir);
  await Promise.all(files.map((file) => syncPath(join(dir, file))));
  await syncPath(dir);
}

/** Flushes a file's bytes, or a folder's entries: a folder opens read-only, and its handle's fsync flushes them. */
async function syncPath(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return false;
      throw error;
    },
  );
}
