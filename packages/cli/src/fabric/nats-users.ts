import { natsPermissions, natsUsers, type NatsUserName } from '@hopline/contracts';
import { nkeys } from 'nats';

export interface NatsUser {
  /** A service, `embedded`, or an operator tool (see natsUsers). */
  name: NatsUserName;
  /** The public key the server config lists (`U…`): not a secret. */
  publicKey: string;
  /** The seed the client signs the server's challenge with (`SU…`): the secret. */
  seed: string;
}

/**
 * An nkey user for every service that connects to NATS, the embedded mode and the operators'
 * tools: the one whose seed is in `keptSeeds` (an earlier run's), else a fresh one.
 */
export function createNatsUsers(keptSeeds: Partial<Record<NatsUserName, string>> = {}): NatsUser[] {
  return natsUsers.map((name) => {
    const kept = keptSeeds[name];
    const pair = kept === undefined ? nkeys.createUser() : keptUser(name, kept);
    return {
      name,
      publicKey: pair.getPublicKey(),
      seed: new TextDecoder().decode(pair.getSeed()),
    };
  });
}

type UserKeyPair = ReturnType<typeof nkeys.createUser>;

/**
 * The key pair of a user's kept seed. One mangled, or another key's seed put in its place, is
 * refused here: it would otherwise show only as NATS refusing that service.
 */
function keptUser(name: NatsUserName, seed: string): UserKeyPair {
  const refused = (cause?: unknown) =>
    new Error(
      `the seed kept for NATS user ${name} (${name}/nats.nk) is not a user's nkey seed: remove it to make a new one`,
      { cause },
    );
  let pair: UserKeyPair;
  try {
    pair = nkeys.fromSeed(new TextEncoder().encode(seed));
  } catch (error) {
    throw refused(error);
  }
  if (!pair.getPublicKey().startsWith('U')) throw refused();
  return pair;
}

/**
 * nats-server's `authorization` block for these users, each with its own permissions
 * from @hopline/contracts. A client without one of these keys is refused: the block lists no
 * anonymous user.
 */
function natsAuthorization(users: readonly NatsUser[]): Record<string, unknown> {
  return {
    users: users.map((user) => {
      const permissions = natsPermissions[user.name];
      return {
        nkey: user.publicKey,
        permissions: {
          publish: { allow: permissions.publish },
          subscribe: { allow: permissions.subscribe },
          ...(permissions.allowResponses ? { allow_responses: true } : {}),
        },
      };
    }),
  };
}

/**
 * The block as a nats-server configuration file, to `include` from the server's own. The
 * server's format reads JSON, and JSON quotes every subject, so `$JS.API…` is not taken for a
 * variable.
 */
export function natsAuthorizationConf(users: readonly NatsUser[]): string {
  return `# Made by pnpm fabric:credentials: one nkey user per Hopline service (and the embedded mode, pnpm controls and the nats-box), with its permissions.\nauthorization: ${JSON.stringify(natsAuthorization(users), null, 2)}\n`;
}
