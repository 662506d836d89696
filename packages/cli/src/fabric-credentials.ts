// `pnpm fabric:credentials [--out deploy/fabric] [--namespace hopline]`: makes the fabric's
// credentials in one go (a private CA, NATS's and each service's certificates, one nkey user per
// NATS service with its permissions, also as operator-mode `.creds` files) in the files
// docker-compose.yml, the NATS chart and the Kubernetes overlay read. The folder holds secrets: it is never committed (.gitignore).
import { resolve } from 'node:path';
import { parseCommandLine, UsageError } from './command.js';
import { fabricLayout, writeFabric } from './fabric/write-fabric.js';

const USAGE = `usage: pnpm fabric:credentials [--out dir] [--namespace ns]

  --out        where to write (default deploy/fabric, which docker-compose.yml mounts)
  --namespace  the Kubernetes namespace the certificates name services in (default hopline)`;

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
    },
  });
  if (!DNS_LABEL.test(values.namespace)) {
    throw new UsageError(`--namespace takes a Kubernetes namespace (a DNS label), not "${values.namespace}"`);
  }
  // pnpm runs scripts in the repository root; a relative path means the folder pnpm was run in.
  const dir = resolve(process.env.INIT_CWD ?? '.', values.out);
  await writeFabric(dir, { namespace: values.namespace });
  console.error(
    [
      `wrote the fabric's credentials to ${dir}:`,
      `  compose:    docker compose up (mounts ${values.out})`,
      `  NATS chart: helm upgrade --install nats nats/nats -f deploy/charts/nats.values.yaml -f ${values.out}/${fabricLayout.chartValues}`,
      `  Kubernetes: kubectl apply -n ${values.namespace} -f ${values.out}/${fabricLayout.kubernetesSecrets}`,
      `Keep ${fabricLayout.caKey} offline; the running fabric never reads it.`,
    ].join('\n'),
  );
} catch (error) {
  // Only a wrong command line gets the usage and status 2; a folder that cannot be written or a
  // failing openssl is a failure of the run.
  console.error(`error: ${(error as Error).message}${error instanceof UsageError ? `\n${USAGE}` : ''}`);
  process.exitCode = error instanceof UsageError ? 2 : 1;
}
