import {
  createAccount,
  createOperator,
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
  /** nats-server configuration to `include`: the operator, and the account preloaded into a memory resolver. */
  serverConf: string;
  /** Each service's credentials file (its user JWT and nkey seed), as `NATS_CREDS` names it. */
  creds: Array<{ service: NatsUser['service']; creds: string }>;
}

// No limit: JetStream on for the account, bounded by the streams' own limits (see the JetStream policy).
const UNLIMITED = -1;

/**
 * The same users and permissions as the nkey `authorization` block, in operator mode: a fresh
 * operator signs one account (JetStream enabled) and the server's system account; the first signs a JWT per user carrying its
 * service's permissions from @hopline/contracts. The server trusts the operator and resolves
 * the account from memory; a client proves itself with its `.creds` file.
 */
export async function operatorFabric(users: readonly NatsUser[]): Promise<OperatorFabric> {
  const operator = createOperator();
  const account = createAccount();
  // The server's own account, which JetStream needs in operator mode; no user of ours is in it.
  const system = createAccount();
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
      const permissions = natsPermissions[user.service];
      const jwt = await encodeUser(user.service, user.publicKey, account, {
        subs: UNLIMITED,
        data: UNLIMITED,
        payload: UNLIMITED,
        pub: { allow: [...permissions.publish] },
        sub: { allow: [...permissions.subscribe] },
        // One reply per request received, within two minutes (in nanoseconds): what the nkey
        // block's `allow_responses: true` allows.
        ...(permissions.allowResponses ? { resp: { max: 1, ttl: 120_000_000_000 } } : {}),
      });
      const pair = fromSeed(new TextEncoder().encode(user.seed));
      return { service: user.service, creds: new TextDecoder().decode(fmtCreds(jwt, pair)) };
    }),
  );
  const serverConf = [
    '# Made by pnpm fabric:credentials: operator mode (JWT), an alternative to auth.conf; include one of them.',
    `operator: ${JSON.stringify(operatorJwt)}`,
    `system_account: ${system.getPublicKey()}`,
    'resolver: MEMORY',
    `resolver_preload: ${JSON.stringify({ [account.getPublicKey()]: accountJwt, [system.getPublicKey()]: systemJwt }, null, 2)}`,
    '',
  ].join('\n');
  return { serverConf, creds };
}
