import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { subjectToken } from '@hopline/contracts';

const ID_FILE = 'worker-id';
const INVALID = /[^A-Za-z0-9_-]+/g;

/**
 * This worker's identity: WORKER_ID when set; otherwise the one kept in its data directory,
 * made on first start from the host name and a random suffix. The identity names the worker's
 * own ingest consumer, so it must differ between two workers on one host (each has its own
 * data directory, its own index) and stay the same across restarts of one (its consumer
 * resumes where the index left off).
 */
export async function workerIdentity(configured: string | undefined, dataDir: string): Promise<string> {
  if (configured !== undefined) return subjectToken(configured, 'WORKER_ID');
  const file = join(dataDir, ID_FILE);
  try {
    const kept = (await readFile(file, 'utf8')).trim();
    // The file may be edited by hand: held to WORKER_ID's rule, so bad content is named here
    // rather than failing start-up later as a NATS subject error.
    if (kept) return subjectToken(kept, `the worker id in ${file}`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const made = `${hostname().replace(INVALID, '-').slice(0, 100)}-${randomBytes(4).toString('hex')}`;
  await mkdir(dataDir, { recursive: true });
  await writeFile(file, `${made}\n`, { flag: 'wx' }).catch(async (error: NodeJS.ErrnoException) => {
    // Another process made it first: the file's id is the one.
    if (error.code !== 'EEXIST') throw error;
  });
  return (await readFile(file, 'utf8')).trim();
}
