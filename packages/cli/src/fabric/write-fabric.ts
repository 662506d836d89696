import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { inboxPrefix, type NatsUserName } from '@hopline/contracts';
import { createCertificateAuthority } from './certificates.js';
import { operatorFabric } from './nats-operator.js';
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
}

/** Where `writeFabric` put what, relative to its folder: what compose, the chart and Kubernetes read. */
export const fabricLayout = {
  caCert: 'ca.crt',
  caKey: 'ca.key',
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
 * are written owner-readable only. Running it again replaces them all: redeploy everything
 * together.
 */
export async function writeFabric(dir: string, options: FabricOptions): Promise<void> {
  const path = (relative: string) => join(dir, relative);
  const users = createNatsUsers();
  for (const folder of ['nats', 'kubernetes', ...fabricServices, ...users.map((user) => user.name)]) {
    await mkdir(path(folder), { recursive: true });
  }

  const ca = await createCertificateAuthority({ cert: path(fabricLayout.caCert), key: path(fabricLayout.caKey) });
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

  for (const user of users) {
    await writeFile(path(fabricLayout.userNkey(user.name)), `${user.seed}\n`, { mode: 0o600 });
  }
  await writeFile(path(fabricLayout.natsAuthConf), natsAuthorizationConf(users));
  const operatorMode = await operatorFabric(users);
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
