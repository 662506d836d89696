import { readFileSync } from 'node:fs';
import { ValidationError } from '@hopline/contracts';
import {
  credsAuthenticator,
  nkeyAuthenticator,
  tokenAuthenticator,
  usernamePasswordAuthenticator,
  type Authenticator,
  type TlsOptions,
} from 'nats';

/**
 * The variables NATS tools read (the `nats` CLI names them the same): at most one way to
 * authenticate, and TLS when a CA or a client certificate is named. All optional: without
 * them the connection is anonymous and plaintext, as in development.
 */
export interface NatsSecurityEnv {
  /** A credentials file (user JWT and seed) of an operator-mode deployment. */
  NATS_CREDS?: string | undefined;
  /** A file holding the user's nkey seed (`SU…`), as `pnpm fabric:credentials` writes them. */
  NATS_NKEY?: string | undefined;
  NATS_USER?: string | undefined;
  NATS_PASSWORD?: string | undefined;
  NATS_TOKEN?: string | undefined;
  /** CA certificate the server's certificate must chain to. */
  NATS_CA?: string | undefined;
  /** Client certificate and key, for a server that verifies clients. */
  NATS_CERT?: string | undefined;
  NATS_KEY?: string | undefined;
}

export interface NatsSecurity {
  authenticator?: Authenticator;
  tls?: TlsOptions;
}

/**
 * The authenticator and TLS options the variables name. Files are read again on every
 * (re)connect, so that rotated credentials and certificates take effect without a restart.
 * Contradictory or half-given settings are refused here, before any connection is tried.
 */
export function natsSecurityFrom(env: NatsSecurityEnv): NatsSecurity {
  const ways = (['NATS_CREDS', 'NATS_NKEY', 'NATS_USER', 'NATS_TOKEN'] as const).filter((name) => env[name]);
  if (ways.length > 1) {
    throw new ValidationError(`set one way to authenticate to NATS, not ${ways.join(' and ')}`);
  }
  if (env.NATS_USER && !env.NATS_PASSWORD) throw new ValidationError('NATS_USER needs NATS_PASSWORD');
  if (env.NATS_PASSWORD && !env.NATS_USER) throw new ValidationError('NATS_PASSWORD needs NATS_USER');
  if (Boolean(env.NATS_CERT) !== Boolean(env.NATS_KEY)) {
    throw new ValidationError('NATS_CERT and NATS_KEY name a client certificate and its key: set both or neither');
  }

  const security: NatsSecurity = {};
  if (env.NATS_CREDS) security.authenticator = credsAuthenticator(fileReader(env.NATS_CREDS, 'NATS_CREDS'));
  else if (env.NATS_NKEY) security.authenticator = nkeyAuthenticator(seedReader(env.NATS_NKEY));
  else if (env.NATS_USER) security.authenticator = usernamePasswordAuthenticator(env.NATS_USER, env.NATS_PASSWORD);
  else if (env.NATS_TOKEN) security.authenticator = tokenAuthenticator(env.NATS_TOKEN);

  if (env.NATS_CA || env.NATS_CERT) {
    security.tls = {
      ...(env.NATS_CA ? { caFile: env.NATS_CA } : {}),
      ...(env.NATS_CERT && env.NATS_KEY ? { certFile: env.NATS_CERT, keyFile: env.NATS_KEY } : {}),
    };
  }
  return security;
}

function fileReader(path: string, variable: string): () => Uint8Array {
  // Read now as well, so that a wrong path fails at start-up rather than at the first connect.
  read(path, variable);
  return () => read(path, variable);
}

/** A seed file holds the seed alone, perhaps with a trailing newline, which nkeys would reject. */
function seedReader(path: string): () => Uint8Array {
  const readSeed = () => new TextEncoder().encode(new TextDecoder().decode(read(path, 'NATS_NKEY')).trim());
  readSeed();
  return readSeed;
}

function read(path: string, variable: string): Uint8Array {
  try {
    return readFileSync(path);
  } catch (error) {
    throw new ValidationError(`${variable} names ${path}, which cannot be read: ${(error as Error).message}`, {
      cause: error,
    });
  }
}
