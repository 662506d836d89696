import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { subjectToken } from '@hopline/contracts';
import { z } from 'zod';

/** What a verified API key may do. */
export interface Principal {
  /** A short, non-secret id of the key (a prefix of its hash): rate limits and logs use it. */
  keyId: string;
  tenantId: string;
  userId: string;
  /** Knowledge bases the key may read; requests may narrow this, never widen it. */
  kbIds: readonly string[];
  canIngest: boolean;
}

const token = (what: string) =>
  z.string().refine((value) => {
    try {
      subjectToken(value, what);
      return true;
    } catch {
      return false;
    }
  }, `${what} must be 1-128 letters, digits, "_" or "-"`);

/** A kb id: it names NATS subjects, so it is one subject token. */
export const kbIdSchema = token('kb id').describe('a kb id: 1-128 letters, digits, "_" or "-"');

/**
 * A user id as it travels: in a NATS header beside each of the user's question events, where
 * nats.js trims a value's ends and refuses a line break. So none at either end, and no control
 * characters anywhere: "bob " would read back as "bob", another user. An email or a name with
 * spaces inside is fine.
 */
const userId = z
  .string()
  .max(128)
  .regex(
    /^[^\s\p{C}](?:[^\p{C}]*[^\s\p{C}])?$/u,
    'userId must be 1-128 characters, no control characters, no space at either end',
  );

// Keys are stored as SHA-256 hashes: a leaked key file does not leak usable keys.
const keyEntrySchema = z
  .object({
    keyHash: z.string().regex(/^sha256:[0-9a-f]{64}$/, 'keyHash must be "sha256:" followed by 64 hex digits'),
    tenantId: token('tenantId'),
    userId,
    kbIds: z.array(kbIdSchema).min(1),
    canIngest: z.boolean().default(false),
  })
  .strict();

export const apiKeysFileSchema = z.object({ keys: z.array(keyEntrySchema) }).strict();
export type ApiKeysFile = z.infer<typeof apiKeysFileSchema>;

export function hashApiKey(key: string): string {
  return `sha256:${createHash('sha256').update(key, 'utf8').digest('hex')}`;
}

export function generateApiKey(): string {
  return `hl_${randomBytes(24).toString('base64url')}`;
}

/** A keys document validated, naming the first problem and where it is. */
function validKeysFile(raw: unknown, source: string): ApiKeysFile {
  const result = apiKeysFileSchema.safeParse(raw);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new Error(`${source}: ${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}`);
  }
  return result.data;
}

function parseJson(json: string, source: string): unknown {
  try {
    return JSON.parse(json);
  } catch (error) {
    throw new Error(`${source}: not valid JSON (${(error as Error).message})`);
  }
}

/**
 * Makes a new key for a principal and adds its hash to a keys file, creating the file (readable
 * by its owner only); returns the key, which is kept nowhere else.
 */
export function addApiKey(file: string, principal: Omit<z.input<typeof keyEntrySchema>, 'keyHash'>): string {
  const current = existsSync(file) ? validKeysFile(parseJson(readFileSync(file, 'utf8'), file), file) : { keys: [] };
  const key = generateApiKey();
  const next = validKeysFile({ keys: [...current.keys, { keyHash: hashApiKey(key), ...principal }] }, file);
  writeFileSync(file, `${JSON.stringify(next, null, 2)}\n`, { mode: 0o600 });
  return key;
}

export class ApiKeyStore {
  private readonly byHash: ReadonlyMap<string, Principal>;
  /**
   * Keys already verified, so that a client's every request costs a map lookup rather than a
   * SHA-256; in memory only, as every presented key passes through it anyway. Only known keys
   * enter it: at most one entry per stored key, whatever unknown keys clients send. A store's
   * keys never change (the gateway builds its store at start, so revoking a key is a restart
   * with a file without it), so neither does what it has verified.
   */
  private readonly verified = new Map<string, Principal>();

  constructor(file: ApiKeysFile) {
    this.byHash = new Map(
      file.keys.map((entry) => [
        entry.keyHash,
        {
          keyId: entry.keyHash.slice('sha256:'.length, 'sha256:'.length + 12),
          tenantId: entry.tenantId,
          userId: entry.userId,
          kbIds: entry.kbIds,
          canIngest: entry.canIngest,
        },
      ]),
    );
  }

  /** Parses and validates a keys document, naming the first problem. */
  static parse(json: string, source: string): ApiKeyStore {
    return new ApiKeyStore(validKeysFile(parseJson(json, source), source));
  }

  static fromFile(path: string): ApiKeyStore {
    return ApiKeyStore.parse(readFileSync(path, 'utf8'), path);
  }

  /** The keys named by API_KEYS_FILE or, failing that, API_KEYS; a gateway without keys refuses to start. */
  static fromConfig(config: { API_KEYS_FILE?: string | undefined; API_KEYS?: string | undefined }): ApiKeyStore {
    if (config.API_KEYS_FILE) return ApiKeyStore.fromFile(config.API_KEYS_FILE);
    if (config.API_KEYS) return ApiKeyStore.parse(config.API_KEYS, 'API_KEYS');
    throw new Error('no API keys: set API_KEYS_FILE to a keys file or API_KEYS to its JSON');
  }

  get size(): number {
    return this.byHash.size;
  }

  /** The principal of a presented key, or undefined when the key is unknown. */
  verify(presentedKey: string): Principal | undefined {
    const known = this.verified.get(presentedKey);
    if (known) return known;
    const principal = this.byHash.get(hashApiKey(presentedKey));
    if (principal) this.verified.set(presentedKey, principal);
    return principal;
  }
}

/** Reads `Authorization: Bearer <key>`; undefined when absent or not a bearer token. */
export function bearerToken(authorization: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  return match?.[1];
}
