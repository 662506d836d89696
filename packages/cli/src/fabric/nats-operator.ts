import {
  createAccount,
  createOperator,
  type KeyPair,
  encodeAccount,
  encodeOperator,
  encodeUser,
  fmtCreds,
  fromSeed,
} from '@nats-io/jwt';
import { natsPermissions } from '@hopline/contracts';
import type { NatsUser } from './nats-users.js';

/** What an operator-mode (JWT) NATS deployment needs: the server's configuration and one `.creds` per user. */
export interface OperatorFabric {
  /**
   * nats-server's settings: the operator, the accounts preloaded into a memory resolver, and a
   * control line long enough for the users' JWTs (the chart merges them).
   */
  serverSettings: Record<string, unknown>;
  /** The same settings as a configuration file to `include` (compose's NATS). */
  serverConf: string;
  /** Each user's credentials file (its user JWT and nkey seed), as `NATS_CREDS` names it. */
  creds: Array<{ user: NatsUser['name']; creds: string }>;
}

// No limit: JetStream on for the account, bounded by the streams' own limits (see the JetStream policy).
const UNLIMITED = -1;

/**
 * A client sends its user JWT in its CONNECT line, which the server refuses past
 * `max_control_line` (4 KiB by default) and the client then only sees a connect timeout. The
 * JWTs carry every subject a user may use: the gateway's is about 3.8 KB, the embedded
 * user's (three services' permissions) about 6 KB.
 */
const MAX_CONTROL_LINE = 16_384;

/**
 * The seeds of the keys that sign in operator mode: the operator, which the server trusts; the
 * account the users are in, which signs their JWTs; and the server's system account. Kept from
 * one run to the next, a user JWT issued again is still trusted by a server that has not reloaded
 * yet, and the other way round.
 */
export interface NatsIssuers {
  operator: string;
  account: string;
  system: string;
}

/** Fresh issuers: a server configured with them trusts none of the users signed before. */
export function createNatsIssuers(): NatsIssuers {
  const seed = (pair: KeyPair) => new TextDecoder().decode(pair.getSeed());
  return { operator: seed(createOperator()), account: seed(createAccount()), system: seed(createAccount()) };
}

/**
 * The same users and permissions as the nkey `authorization` block, in operator mode: the
 * operator signs one account (JetStream enabled) and the server's system account; the account
 * signs a JWT per user carrying its permissions from @hopline/contracts. The server trusts the
 * operator and resolves the accounts from memory; a client proves itself with its `.creds` file.
 * A new user, or new permissions, means running `pnpm fabric:credentials` again, which signs
 * them with the issuers it kept.
 */
export async function operatorFabric(users: readonly NatsUser[], issuers: NatsIssuers): Promise<OperatorFabric> {
  const pair = (seed: string) => fromSeed(new TextEncoder().encode(seed));
  const operator = pair(issuers.operator);
  const account = pair(issuers.account);
  // The server's own account, which JetStream needs in operator mode; no user of ours is in it.
  const system = pair(issuers.system);
  const operatorJwt = await encodeOperator('hopline', operator, { system_account: system.getPublicKey() });
  const systemJwt = await encodeAccount('SYS', system, {}, { signer: operator });
  const accountJwt = await encodeAccount(
    'HOPLINE',
    account,
    {
      limits: {
        // A limit a JWT leaves out is 0 to the server: each must be given.
        subs: UNLIMITED,
        conn: UNLIMITED,
        leaf: UNLIMITED,
        data: UNLIMITED,
        payload: UNLIMITED,
        imports: UNLIMITED,
        exports: UNLIMITED,
        wildcards: true,
        mem_storage: UNLIMITED,
        disk_storage: UNLIMITED,
        streams: UNLIMITED,
        consumer: UNLIMITED,
      },
    },
    { signer: operator },
  );
  const creds = await Promise.all(
    users.map(async (user) => {
      const permissions = natsPermissions[user.name];
      const jwt = await encodeUser(user.name, user.publicKey, account, {
        subs: UNLIMITED,
        data: UNLIMITED,
        payload: UNLIMITED,
        pub: { allow: [...permissions.publish] },
        sub: { allow: [...permissions.subscribe] },
        // One reply per request received, within two minutes (in nanoseconds): what the nkey
        // block's `allow_responses: true` allows.
        ...(permissions.allowResponses ? { resp: { max: 1, ttl: 120_000_000_000 } } : {}),
      });
      return { user: user.name, creds: new TextDecoder().decode(fmtCreds(jwt, pair(user.seed))) };
    }),
  );
  const serverSettings = {
    operator: operatorJwt,
    system_account: system.getPublicKey(),
    resolver: 'MEMORY',
    resolver_preload: { [account.getPublicKey()]: accountJwt, [system.getPublicKey()]: systemJwt },
    max_control_line: MAX_CONTROL_LINE,
  };
  const serverConf = [
    '# Made by pnpm fabric:credentials: operator mode (JWT); auth.conf has the same users as nkeys. Include one of them.',
    // The server's format reads JSON values.
    ...Object.entries(serverSettings).map(([key, value]) => `${key}: ${JSON.stringify(value, null, 2)}`),
    '',
  ].join('\n');
  return { serverSettings, serverConf, creds };
}
