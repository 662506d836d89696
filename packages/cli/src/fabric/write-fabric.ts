import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { inboxPrefix, natsUsers, type NatsUserName } from '@hopline/contracts';
import { certificateAuthority, createCertificateAuthority } from './certificates.js';
import { createNatsIssuers, operatorFabric, type NatsIssuers } from './nats-operator.js';
import { createNatsUsers, natsAuthorizationConf } from './nats-users.js';

/** The five services; each gets a certificate, and those on NATS an nkey. */
export const fabricServices = [
  'answer-gateway',
  'hop-reasoner',
  'query-understanding',
  'reranker',
  'retrieval-worker',
] as const;

export interface FabricOptions {
  /** The Kubernetes namespace, for the certificates' service names (`reranker.<ns>.svc`). */
  namespace: string;
  /** Make a new CA even where the folder holds one: every certificate issued by the old one stops being trusted. */
  newCa?: boolean;
  /**
   * Make new NATS issuers and users even where the folder holds them: every `.creds` and nkey
   * deployed before is refused once NATS has the new configuration.
   */
  newNatsKeys?: boolean;
}

/** What a run took over from the folder's earlier run and what it made, one line each, for the operator. */
export interface FabricReport {
  kept: string[];
  made: string[];
}

/** Where `writeFabric` put what, relative to its folder: what compose, the chart and Kubernetes read. */
export const fabricLayout = {
  caCert: 'ca.crt',
  caKey: 'ca.key',
  /** The seeds of the operator-mode issuers (see NatsIssuers): like ca.key, for issuing only. */
  natsIssuers: { operator: 'nats-operator.nk', account: 'nats-account.nk', system: 'nats-system-account.nk' },
  /** The users in operator mode (JWT), what compose's NATS includes; services authenticate with their `.creds`. */
  natsOperatorConf: 'nats/operator.conf',
  /** The same users as nkeys: include it instead of operator.conf, and give services their `nats.nk` (NATS_NKEY). */
  natsAuthConf: 'nats/auth.conf',
  natsServerCert: 'nats/tls.crt',
  natsServerKey: 'nats/tls.key',
  natsCa: 'nats/ca.crt',
  serviceCert: (service: string) => `${service}/tls.crt`,
  serviceKey: (service: string) => `${service}/tls.key`,
  serviceCa: (service: string) => `${service}/ca.crt`,
  /** A NATS user's (see natsUsers in @hopline/contracts) nkey seed and credentials file. */
  userNkey: (user: string) => `${user}/nats.nk`,
  userCreds: (user: string) => `${user}/nats.creds`,
  chartValues: 'nats.values.yaml',
  kubernetesSecrets: 'kubernetes/fabric-secrets.yaml',
  /** In that file: each service's Secret, which its Deployment mounts, and the NATS chart's TLS Secret. */
  serviceSecret: (service: string) => `hopline-fabric-${service}`,
  natsTlsSecret: 'nats-tls',
  /** And the `operator-inspect` credentials the NATS chart's nats-box connects with. */
  natsBoxSecret: 'hopline-fabric-nats-box',
} as const;

const serviceNames = (name: string, options: FabricOptions): string[] => [
  name,
  `${name}.${options.namespace}`,
  `${name}.${options.namespace}.svc`,
  `${name}.${options.namespace}.svc.cluster.local`,
  // Through a port published on the host (compose) or forwarded (kubectl port-forward).
  'localhost',
  '127.0.0.1',
];

/**
 * Everything the fabric needs, made in one go into `dir`: a private CA; NATS's server
 * certificate and its users in operator mode (an operator, an account and a user JWT per NATS
 * user, carrying its permissions), also as an nkey `authorization` block; each service's
 * certificate (server and client) and CA; each NATS user's `.creds` file and nkey seed (the
 * services', the embedded mode's and `pnpm controls`'s); the NATS chart values that carry the
 * operator and its account; and the Kubernetes Secrets that carry the services' files. Secrets
 * are written owner-readable only.
 *
 * Run again over the same folder, it keeps what others trust: the CA, the NATS issuers and the
 * NATS users' nkeys found there (`newCa`, `newNatsKeys` replace them), and issues everything
 * else again with them (certificates, user JWTs, configuration, Secrets). Certificates and
 * credentials already deployed stay valid while the new ones roll out, in any order. A CA or a
 * set of issuers found in part (`ca.key` kept offline, say) is refused before anything is
 * written: making new ones silently would end the trust in every deployed certificate or user.
 */
export async function writeFabric(dir: string, options: FabricOptions): Promise<FabricReport> {
  const path = (relative: string) => join(dir, relative);
  const report: FabricReport = { kept: [], made: [] };
  const caFiles = { cert: path(fabricLayout.caCert), key: path(fabricLayout.caKey) };
  const keptCa = options.newCa ? undefined : await readKept(caFiles, 'the CA', '--new-ca');
  const issuerFiles = {
    operator: path(fabricLayout.natsIssuers.operator),
    account: path(fabricLayout.natsIssuers.account),
    system: path(fabricLayout.natsIssuers.system),
  };
  const keptIssuers = options.newNatsKeys
    ? undefined
    : await readKept(issuerFiles, 'the NATS operator and accounts', '--new-nats-keys');
  // Whatever trusted what is made anew instead stops working once it is deployed.
  const replacesCa = !keptCa && (await isThere(caFiles.cert));
  const replacesIssuers = !keptIssuers && (await isThere(path(fabricLayout.natsOperatorConf)));
  const keptSeeds: Partial<Record<NatsUserName, string>> = {};
  if (!options.newNatsKeys) {
    for (const name of natsUsers) {
      const seed = await readIfThere(path(fabricLayout.userNkey(name)));
      if (seed !== undefined) keptSeeds[name] = seed.trim();
    }
  }
  const users = createNatsUsers(keptSeeds);
  // Signed before anything is written: kept seeds that cannot sign leave the folder as it was.
  const issuers = keptIssuers ?? createNatsIssuers();
  const operatorMode = await operatorFabric(users, issuers).catch((error: unknown) => {
    if (!keptIssuers) throw error;
    throw new Error(
      `the NATS operator and accounts kept in ${Object.values(fabricLayout.natsIssuers).join(', ')} cannot sign (${(error as Error).message}): put their seeds back as they were made, or pass --new-nats-keys`,
      { cause: error },
    );
  });
  for (const folder of ['nats', 'kubernetes', ...fabricServices, ...users.map((user) => user.name)]) {
    await mkdir(path(folder), { recursive: true });
  }

  const ca = keptCa ? certificateAuthority(caFiles) : await createCertificateAuthority(caFiles);
  if (keptCa) {
    report.kept.push(
      `the CA (${fabricLayout.caCert}, ${fabricLayout.caKey}): certificates already deployed stay trusted`,
    );
  } else {
    report.made.push(
      `a new CA (${fabricLayout.caCert}, ${fabricLayout.caKey})${replacesCa ? ': certificates issued by the one it replaces are no longer trusted; deploy everything together' : ''}`,
    );
  }
  const caPem = await readFile(ca.cert, 'utf8');
  await ca.issue('nats', serviceNames('nats', options), {
    cert: path(fabricLayout.natsServerCert),
    key: path(fabricLayout.natsServerKey),
  });
  await writeFile(path(fabricLayout.natsCa), caPem);
  for (const service of fabricServices) {
    await ca.issue(service, serviceNames(service, options), {
      cert: path(fabricLayout.serviceCert(service)),
      key: path(fabricLayout.serviceKey(service)),
    });
    await writeFile(path(fabricLayout.serviceCa(service)), caPem);
  }

  report.made.push(`certificates for NATS and the ${fabricServices.length} services, issued by the CA`);

  const keptUsers = users.filter((user) => keptSeeds[user.name] !== undefined).map((user) => user.name);
  const newUsers = users.filter((user) => keptSeeds[user.name] === undefined).map((user) => user.name);
  if (keptUsers.length > 0) report.kept.push(`the nkeys of NATS users ${keptUsers.join(', ')}`);
  if (newUsers.length > 0) report.made.push(`new nkeys for NATS users ${newUsers.join(', ')}`);
  for (const user of users) {
    await writeFile(path(fabricLayout.userNkey(user.name)), `${user.seed}\n`, { mode: 0o600 });
  }
  await writeFile(path(fabricLayout.natsAuthConf), natsAuthorizationConf(users));

  if (keptIssuers) {
    report.kept.push('the NATS operator and accounts: users signed before stay trusted');
  } else {
    for (const key of Object.keys(issuerFiles) as Array<keyof NatsIssuers>) {
      await writeFile(issuerFiles[key], `${issuers[key]}\n`, { mode: 0o600 });
    }
    report.made.push(
      `a new NATS operator and accounts (${Object.values(fabricLayout.natsIssuers).join(', ')})${replacesIssuers ? ': NATS refuses the users signed by the ones they replace once it has the new configuration, and the new users until then; deploy everything together' : ''}`,
    );
  }
  await writeFile(path(fabricLayout.natsOperatorConf), operatorMode.serverConf);
  for (const { user, creds } of operatorMode.creds) {
    await writeFile(path(fabricLayout.userCreds(user)), creds, { mode: 0o600 });
  }
  await writeFile(path(fabricLayout.chartValues), chartValues(operatorMode.serverSettings));
  const natsCreds = async (user: string) => readFile(path(fabricLayout.userCreds(user)), 'utf8');

  const secrets = [
    await tlsSecret(
      fabricLayout.natsTlsSecret,
      path(fabricLayout.natsServerCert),
      path(fabricLayout.natsServerKey),
      ca.cert,
    ),
    ...(await Promise.all(
      fabricServices.map(async (service) =>
        opaqueSecret(fabricLayout.serviceSecret(service), {
          'ca.crt': caPem,
          'tls.crt': await readFile(path(fabricLayout.serviceCert(service)), 'utf8'),
          'tls.key': await readFile(path(fabricLayout.serviceKey(service)), 'utf8'),
          ...(users.some((user) => user.name === service) ? { 'nats.creds': await natsCreds(service) } : {}),
        }),
      ),
    )),
    opaqueSecret(fabricLayout.natsBoxSecret, { 'nats.creds': await natsCreds(NATS_BOX_USER) }),
  ];
  await writeFile(path(fabricLayout.kubernetesSecrets), secrets.join('---\n'), { mode: 0o600 });
  report.made.push(
    `each NATS user's .creds, ${fabricLayout.natsAuthConf}, ${fabricLayout.natsOperatorConf}, ${fabricLayout.chartValues} and ${fabricLayout.kubernetesSecrets}`,
  );
  return report;
}

/**
 * The contents of these files of an earlier run, when all of them are there; undefined when
 * none is. Some without the others is refused: what `option` would make anew is trusted by what
 * is deployed, so making it anew must be asked for.
 */
async function readKept<K extends string>(
  files: Record<K, string>,
  what: string,
  option: string,
): Promise<Record<K, string> | undefined> {
  const entries = await Promise.all(
    Object.entries<string>(files).map(async ([key, file]) => [key, file, await readIfThere(file)] as const),
  );
  const missing = entries.filter(([, , text]) => text === undefined).map(([, file]) => file);
  if (missing.length === entries.length) return undefined;
  if (missing.length > 0) {
    throw new Error(
      `${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} missing while the rest of ${what} is there: put ${missing.length === 1 ? 'it' : 'them'} back to keep ${what}, or pass ${option} to make ${what} anew (whatever the old one signed is then no longer trusted)`,
    );
  }
  return Object.fromEntries(entries.map(([key, , text]) => [key, text?.trim()])) as Record<K, string>;
}

async function isThere(file: string): Promise<boolean> {
  return (await readIfThere(file)) !== undefined;
}

/** A file's text, or undefined when there is no such file. */
async function readIfThere(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** The NATS user of the chart's nats-box, the shell operators run `nats stream info …` from. */
const NATS_BOX_USER = 'operator-inspect' satisfies NatsUserName;

/**
 * The second values file for the NATS chart: the operator and its accounts, merged into its
 * config; and the nats-box's context, which connects as `operator-inspect` with its inbox prefix
 * (the only inboxes that user may read). The chart adds the CA of `tlsCA` to the context itself.
 */
function chartValues(serverSettings: Record<string, unknown>): string {
  // JSON is YAML: the JWTs and keys stay quoted strings.
  const values = {
    config: { merge: serverSettings },
    natsBox: {
      contexts: {
        default: {
          creds: { secretName: fabricLayout.natsBoxSecret, key: 'nats.creds' },
          merge: { inbox_prefix: inboxPrefix(NATS_BOX_USER) },
        },
      },
    },
  };
  return `# Made by pnpm fabric:credentials: pass it after deploy/charts/nats.values.yaml.\n${JSON.stringify(values, null, 2)}\n`;
}

async function tlsSecret(name: string, certFile: string, keyFile: string, caFile: string): Promise<string> {
  return secret(name, 'kubernetes.io/tls', {
    'tls.crt': await readFile(certFile, 'utf8'),
    'tls.key': await readFile(keyFile, 'utf8'),
    'ca.crt': await readFile(caFile, 'utf8'),
  });
}

function opaqueSecret(name: string, data: Record<string, string>): string {
  return secret(name, 'Opaque', data);
}

function secret(name: string, type: string, data: Record<string, string>): string {
  const entries = Object.entries(data).map(([key, value]) => `  ${key}: ${Buffer.from(value).toString('base64')}`);
  return [
    'apiVersion: v1',
    'kind: Secret',
    'metadata:',
    `  name: ${name}`,
    '  labels:',
    '    app.kubernetes.io/part-of: hopline',
    `type: ${type}`,
    'data:',
    ...entries,
    '',
  ].join('\n');
}
