import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ValidationError } from '@hopline/contracts';
import type { Embedder } from '@hopline/retrieval';
import { z } from 'zod';

const IDENTITY_FILE = 'embedder.json';
const identitySchema = z.object({ model: z.string(), dimensions: z.number().int().positive() });
type Identity = z.infer<typeof identitySchema>;

const describe = (identity: Identity) => `${identity.model} (${identity.dimensions} dimensions)`;

/** What to do about an index built by another embedder; docs/operations.md says the same. */
export const reindexAdvice = (indexDir: string, dataDir: string) =>
  `the vectors of two embedders cannot be compared. To re-index with the configured embedder, stop the worker, ` +
  `remove ${indexDir} and ${join(dataDir, 'bm25')}, and start it again: it reads the ingest stream from the start ` +
  `and indexes every document it still holds anew (ingest older ones again with pnpm ingest). ` +
  `To keep this index, configure the embedder it was built by.`;

/**
 * The embedder is part of a vector index's identity: the index folder keeps the model and
 * dimensions that built it, and opening it with another embedder is refused with what to do,
 * rather than failing on the first vector of another length, or comparing query vectors of
 * one model with document vectors of another when the lengths happen to agree. A folder
 * without the file (new, or from before the file existed) takes the configured embedder's.
 */
export async function checkIndexEmbedder(indexDir: string, dataDir: string, embedder: Embedder): Promise<void> {
  const file = join(indexDir, IDENTITY_FILE);
  const configured: Identity = { model: embedder.model, dimensions: embedder.dimensions };
  let kept: Identity | undefined;
  try {
    const parsed = identitySchema.safeParse(JSON.parse(await readFile(file, 'utf8')));
    if (!parsed.success) throw new ValidationError(`${file} is malformed: ${parsed.error.message}`);
    kept = parsed.data;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (kept === undefined) {
    await mkdir(indexDir, { recursive: true });
    await writeFile(file, `${JSON.stringify(configured)}\n`);
    return;
  }
  if (kept.model !== configured.model || kept.dimensions !== configured.dimensions) {
    throw new ValidationError(
      `the vector index in ${indexDir} was built by the embedder ${describe(kept)}, but this worker is configured with ${describe(configured)}: ${reindexAdvice(indexDir, dataDir)}`,
    );
  }
}
