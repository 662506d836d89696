import { createReadStream } from 'node:fs';
import { mkdir, open, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { z } from 'zod';

/**
 * A snapshot of a store and its index, in a folder of its own: `documents.jsonl` (every
 * document's live state, one write-log entry each), the index's own files, and `manifest.json`
 * written last. It replaces the folder before it atomically enough for a crash: the new one is
 * written beside (`.next`), the old moved aside (`.old`) and removed only once the new one is
 * in place, so at start-up there is always a whole snapshot or none, never half of one.
 */
export interface IndexSnapshot {
  /** Writes the index's own state into `dir`, beside the store's documents. */
  save(dir: string): Promise<void>;
  /** Loads what `save` wrote, before the store hands the documents to the listener's `restored`. */
  load(dir: string): Promise<void>;
}

const MANIFEST_FILE = 'manifest.json';
const DOCUMENTS_FILE = 'documents.jsonl';
const FORMAT = 1;
const manifestSchema = z.object({ format: z.literal(FORMAT), documents: z.number().int().nonnegative() });
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

/** Loads the index, then hands each document entry, in the order written, to `onEntry`. */
export async function readSnapshot(dir: string, index: IndexSnapshot, onEntry: (raw: unknown) => void): Promise<void> {
  const manifest = manifestSchema.parse(JSON.parse(await readFile(join(dir, MANIFEST_FILE), 'utf8')));
  await index.load(dir);
  let read = 0;
  const lines = createInterface({ input: createReadStream(join(dir, DOCUMENTS_FILE)), crlfDelay: Infinity });
  for await (const line of lines) {
    if (line.length === 0) continue;
    onEntry(JSON.parse(line));
    read++;
  }
  if (read !== manifest.documents)
    throw new Error(`snapshot ${dir} lists ${manifest.documents} documents but holds ${read}`);
}

export async function writeSnapshot(
  dir: string,
  entries: Iterable<unknown>,
  index: IndexSnapshot,
  durable: boolean,
): Promise<void> {
  const next = `${dir}.next`;
  await rm(next, { recursive: true, force: true });
  await mkdir(next, { recursive: true });
  const documents = await open(join(next, DOCUMENTS_FILE), 'w');
  let count = 0;
  try {
    let lines: string[] = [];
    for (const entry of entries) {
      lines.push(JSON.stringify(entry));
      count++;
      if (lines.length === LINES_PER_WRITE) {
        await documents.write(`${lines.join('\n')}\n`);
        lines = [];
      }
    }
    if (lines.length > 0) await documents.write(`${lines.join('\n')}\n`);
    if (durable) await documents.datasync();
  } finally {
    await documents.close();
  }
  await index.save(next);
  await writeFile(join(next, MANIFEST_FILE), JSON.stringify({ format: FORMAT, documents: count }));
  if (await exists(dir)) await rename(dir, `${dir}.old`);
  await rename(next, dir);
  await rm(`${dir}.old`, { recursive: true, force: true });
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
