// `pnpm fabric:credentials [--out deploy/fabric] [--namespace hopline] [--new-ca] [--new-nats-keys]`:
// makes the fabric's credentials in one go (a private CA, NATS's and each service's certificates,
// one nkey user per NATS service with its permissions, also as operator-mode `.creds` files) in
// the files docker-compose.yml, the NATS chart and the Kubernetes overlay read. Run again, it
// keeps the CA, the NATS issuers and users it finds there and issues the rest again with them.
// The folder holds secrets: it is never committed (.gitignore).
import { resolve } from 'node:path';
import { parseCommandLine, UsageError } from './command.js';
import { fabricLayout, writeFabric } from './fabric/write-fabric.js';

const USAGE = `usage: pnpm fabric:credentials [--out dir] [--namespace ns] [--new-ca] [--new-nats-keys]

  --out            where to write (default deploy/fabric, which docker-compose.yml mounts)
  --namespace      the Kubernetes namespace the certificates name services in (default hopline)
  --new-ca         make a new CA even where the folder holds one (a compromised CA key): every
                   certificate the old one issued stops being trusted
  --new-nats-keys  make new NATS operator, accounts and user nkeys even where the folder holds
                   them (a leaked seed): every .creds and nkey deployed before is refused

Run again over the same folder, it keeps the CA, the NATS operator and accounts and the users'
nkeys it finds there, and issues the certificates, .creds and configuration again with them:
what is deployed stays valid while the new files roll out. A CA or NATS issuers found only in
part (ca.key kept offline, say) is refused: put the missing files back, or ask for new ones.`;

/**
 * What Kubernetes takes as a namespace: the certificates name services in it
 * (`reranker.<ns>.svc`), and the printed `kubectl apply -n` uses it.
 */
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

try {
  const { values } = parseCommandLine({
    options: {
      out: { type: 'string', default: 'deploy/fabric' },
      namespace: { type: 'string', default: 'hopline' },
      'new-ca': { type: 'boolean', default: false },
      'new-nats-keys': { type: 'boolean', default: false },
    },
  });
  if (!DNS_LABEL.test(values.namespace)) {
    throw new UsageError(`--namespace takes a Kubernetes namespace (a DNS label), not "${values.namespace}"`);
  }
  // pnpm runs scripts in the repository root; a relative path means the folder pnpm was run in.
  const dir = resolve(process.env.INIT_CWD ?? '.', values.out);
  const report = await writeFabric(dir, {
    namespace: values.namespace,
    newCa: values['new-ca'],
    newNatsKeys: values['new-nats-keys'],
  });
  console.error(
    [
      `wrote the fabric's credentials to ${dir}:`,
      ...report.kept.map((line) => `  kept: ${line}`),
      ...report.made.map((line) => `  made: ${line}`),
      'deploy them with:',
      `  compose:    docker compose up (mounts ${values.out})`,
      `  NATS chart: helm upgrade --install nats nats/nats -f deploy/charts/nats.values.yaml -f ${values.out}/${fabricLayout.chartValues}`,
      `  Kubernetes: kubectl apply -n ${values.namespace} -f ${values.out}/${fabricLayout.kubernetesSecrets}`,
      `Keep ${fabricLayout.caKey} and ${Object.values(fabricLayout.natsIssuers).join(', ')} offline; the running fabric never reads them. Put them back before running this again, to keep the CA and the NATS issuers.`,
    ].join('\n'),
  );
} catch (error) {
  // Only a wrong command line gets the usage and status 2; a folder that cannot be written or a
  // failing openssl is a failure of the run.
  console.error(`error: ${(error as Error).message}${error instanceof UsageError ? `\n${USAGE}` : ''}`);
  process.exitCode = error instanceof UsageError ? 2 : 1;
}
