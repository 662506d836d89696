import * as grpc from '@grpc/grpc-js';
import { ValidationError } from '@hopline/contracts';

/** The variables of `grpcTlsEnv` in @hopline/config, as parsed. */
export interface GrpcTlsEnv {
  GRPC_TLS_CA?: string | undefined;
  GRPC_TLS_CERT?: string | undefined;
  GRPC_TLS_KEY?: string | undefined;
}

/** Credentials for both ends of a hop between two of our services, both proving who they are. */
export interface MutualTls {
  /** A server that refuses a client without a certificate from the CA. */
  server(): grpc.ServerCredentials;
  /** A client that presents its certificate and checks the server's against the CA. */
  client(): grpc.ChannelCredentials;
}

// How often the files are read again: a rotated certificate is in use within this time.
const REFRESH_MS = 60_000;

/**
 * Mutual TLS from the three files the variables name, or undefined (plaintext, as in
 * development) when none is set. The files are watched: certificates renewed in place (a
 * Kubernetes Secret update, a cert-manager renewal) are used without a restart, by new
 * connections. Two of the three is a mistake, refused here.
 */
export function mutualTlsFrom(env: GrpcTlsEnv): MutualTls | undefined {
  const { GRPC_TLS_CA: ca, GRPC_TLS_CERT: cert, GRPC_TLS_KEY: key } = env;
  if (!ca && !cert && !key) return undefined;
  if (!ca || !cert || !key) {
    const missing = Object.entries({ GRPC_TLS_CA: ca, GRPC_TLS_CERT: cert, GRPC_TLS_KEY: key })
      .filter(([, value]) => !value)
      .map(([name]) => name);
    throw new ValidationError(
      `mutual TLS on gRPC needs GRPC_TLS_CA, GRPC_TLS_CERT and GRPC_TLS_KEY; missing ${missing.join(', ')}`,
    );
  }
  const provider = () =>
    new grpc.experimental.FileWatcherCertificateProvider({
      caCertificateFile: ca,
      certificateFile: cert,
      privateKeyFile: key,
      refreshIntervalMs: REFRESH_MS,
    });
  return {
    server() {
      const files = provider();
      return grpc.experimental.createCertificateProviderServerCredentials(files, files, true);
    },
    client() {
      const files = provider();
      return grpc.experimental.createCertificateProviderChannelCredentials(files, files);
    },
  };
}
