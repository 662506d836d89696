import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { ApiKeyStore, generateApiKey, hashApiKey } from '@hopline/answer-gateway';

/** Who the dev key speaks for. */
export const DEV_PRINCIPAL = { tenantId: 'dev', userId: 'dev', kbIds: ['demo'], canIngest: true } as const;

/**
 * The embedded mode's one API key: made on first start, kept (readable by its owner only) so
 * that `pnpm ask` and later starts use the same key.
 */
export function loadOrCreateDevKey(file: string): { key: string; store: ApiKeyStore } {
  let key = existsSync(file) ? readFileSync(file, 'utf8').trim() : '';
  if (!key) {
    key = generateApiKey();
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, `${key}\n`, { mode: 0o600 });
  }
  chmodSync(file, 0o600);
  const store = new ApiKeyStore({
    keys: [{ keyHash: hashApiKey(key), ...DEV_PRINCIPAL, kbIds: [...DEV_PRINCIPAL.kbIds] }],
  });
  return { key, store };
}
