import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/** Where the embedded mode leaves its dev API key, relative to the folder it was started in. */
export const DEV_API_KEY_FILE = '.data/dev-api-key';

/** HOPLINE_API_KEY, else the key the embedded mode wrote; a clear error otherwise. */
export function resolveApiKey(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): string {
  if (env.HOPLINE_API_KEY) return env.HOPLINE_API_KEY;
  const file = resolve(cwd, DEV_API_KEY_FILE);
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  throw new Error(
    `no API key: set HOPLINE_API_KEY, or start the embedded mode (pnpm start), which writes ${DEV_API_KEY_FILE}`,
  );
}
