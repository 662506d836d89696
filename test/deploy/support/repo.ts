import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { EnvSchema } from '@hopline/config';
import { z } from 'zod';

export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

export const readRepoFile = (path: string): string => readFileSync(join(repoRoot, path), 'utf8');

const NOT_SOURCE = new Set(['node_modules', 'dist', '.git', '.data', 'coverage']);

/** Every file under a folder of the repository, as repository-relative paths; installed and built output is skipped. */
export function listRepoFiles(folder: string, keep: (path: string) => boolean = () => true): string[] {
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (NOT_SOURCE.has(entry.name)) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) files.push(relative(repoRoot, path));
    }
  };
  const absolute = join(repoRoot, folder);
  if (existsSync(absolute)) walk(absolute);
  return files.filter(keep).sort();
}

export interface HoplineService {
  /** The folder under services/, which is also its compose service, Deployment and service.name. */
  name: string;
  schema: EnvSchema;
}

const zodObject = z.custom<EnvSchema>(
  (value) => value instanceof z.ZodObject,
  'configSchema must be a zod object whose keys are the environment variables the service reads',
);

/**
 * The services, found by listing services/ and importing each one's configSchema: the checks
 * follow the schemas as they grow, never a list kept by hand.
 */
export async function loadServices(): Promise<HoplineService[]> {
  const names = readdirSync(join(repoRoot, 'services'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(repoRoot, 'services', entry.name, 'src', 'config.ts')))
    .map((entry) => entry.name)
    .sort();
  return Promise.all(
    names.map(async (name) => {
      const module: unknown = await import(pathToFileURL(join(repoRoot, 'services', name, 'src', 'config.ts')).href);
      const exported = z.object({ configSchema: zodObject }).safeParse(module);
      if (!exported.success)
        throw new Error(`services/${name}/src/config.ts: ${exported.error.issues[0]?.message ?? 'no configSchema'}`);
      return { name, schema: exported.data.configSchema };
    }),
  );
}
