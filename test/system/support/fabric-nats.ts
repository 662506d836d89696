import { fabricLayout } from '@hopline/cli';

/**
 * The `tls` block of a nats-server config that serves the certificate `pnpm fabric:credentials`
 * wrote and trusts its CA; `file` resolves a path of the generated folder.
 */
export function natsTlsBlock(file: (relative: string) => string): string[] {
  return [
    'tls {',
    `  cert_file: "${file(fabricLayout.natsServerCert)}"`,
    `  key_file: "${file(fabricLayout.natsServerKey)}"`,
    `  ca_file: "${file(fabricLayout.natsCa)}"`,
    '}',
  ];
}
