// `pnpm fabric:credentials [--out deploy/fabric] [--namespace hopline]`: makes the fabric's
// credentials in one go (a private CA, NATS's and each service's certificates, one nkey user per
// NATS service with its permissions, also as operator-mode `.creds` files) in the files
// docker-compose.yml, the NATS chart and the Kubernetes overlay read. The folder holds secrets: it is never committed (.gitignore).
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { fabricLayout, writeFabric } from './fabric/write-fabric.js';

const USAGE = `usage: pnpm fabric:credentials [--out dir] [--namespace ns]

  --out        where to write (default deploy/fabric, which docker-compose.yml mounts)
  --namespace  the Kubernetes namespace the certificates name services in (default hopline)`;

try {
  const { values } = parseArgs({
    options: {
      out: { type: 'string', default: 'deploy/fabric' },
      namespace: { type: 'string', default: 'hopline' },
    },
  });
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
  console.error(`error: ${(error as Error).message}\n${USAGE}`);
  process.exitCode = 2;
}
