import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** PEM files of a certificate and its key. */
export interface CertificateFiles {
  cert: string;
  key: string;
}

export interface CertificateAuthority extends CertificateFiles {
  /** Issues a certificate for `name` (its CN) valid as server and client, for these DNS names and IPs. */
  issue(name: string, altNames: readonly string[], files: CertificateFiles): Promise<void>;
}

const DAYS_CA = '3650';
// The longest validity clients (browsers' rules aside) still accept; rotate by running the command again.
const DAYS_LEAF = '825';
const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];

/**
 * A private CA made with the `openssl` CLI, for the fabric's own certificates: NATS's server
 * certificate and each service's, which it presents as a gRPC server and as a client. Keys are
 * P-256 and written owner-readable only.
 */
export async function createCertificateAuthority(files: CertificateFiles): Promise<CertificateAuthority> {
  await openssl([
    'req',
    '-x509',
    ...EC_KEY,
    '-keyout',
    files.key,
    '-out',
    files.cert,
    '-days',
    DAYS_CA,
    '-subj',
    '/CN=Hopline fabric CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  await chmod(files.key, 0o600);
  return certificateAuthority(files);
}

/**
 * The CA whose certificate and key are already in these files (made by an earlier run), issuing
 * with them: certificates it issues verify wherever the earlier ones did. openssl refuses a key
 * that does not match the certificate.
 */
export function certificateAuthority(files: CertificateFiles): CertificateAuthority {
  return {
    ...files,
    async issue(name, altNames, leaf) {
      const work = await mkdtemp(join(tmpdir(), 'hopline-cert-'));
      try {
        // Made aside and copied over the files once signed: a CA that cannot sign (a key that
        // does not match its certificate) leaves the certificate and key there as they were.
        const key = join(work, 'tls.key');
        const cert = join(work, 'tls.crt');
        const request = join(work, 'request.csr');
        const extensions = join(work, 'extensions.cnf');
        const san = altNames.map((alt) => (/^[\d.]+$|:/.test(alt) ? `IP:${alt}` : `DNS:${alt}`)).join(',');
        await writeFile(
          extensions,
          [
            'basicConstraints=critical,CA:FALSE',
            'keyUsage=critical,digitalSignature,keyEncipherment',
            'extendedKeyUsage=serverAuth,clientAuth',
            `subjectAltName=${san}`,
          ].join('\n'),
        );
        await openssl(['req', '-new', ...EC_KEY, '-keyout', key, '-out', request, '-subj', `/CN=${name}`]);
        await openssl([
          'x509',
          '-req',
          '-in',
          request,
          '-CA',
          files.cert,
          '-CAkey',
          files.key,
          '-set_serial',
          `0x${randomBytes(16).toString('hex')}`,
          '-days',
          DAYS_LEAF,
          '-extfile',
          extensions,
          '-out',
          cert,
        ]);
        await copyFile(key, leaf.key);
        await chmod(leaf.key, 0o600);
        await copyFile(cert, leaf.cert);
      } finally {
        await rm(work, { recursive: true, force: true });
      }
    },
  };
}

async function openssl(args: string[]): Promise<void> {
  try {
    await run('openssl', args);
  } catch (error) {
    const { stderr } = error as { stderr?: string };
    throw new Error(`openssl ${args[0] ?? ''} failed: ${stderr?.trim() || (error as Error).message}`, { cause: error });
  }
}
