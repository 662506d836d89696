import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { loadHoplineGrpc } from '@hopline/contracts';
import { protoPath as healthProtoPath } from 'grpc-health-check';
import { createGrpcServer, type GrpcServer, type GrpcServerOptions } from '../src/index.js';

export const hopline = loadHoplineGrpc().hopline.v1;

export interface HealthClient extends grpc.Client {
  check(
    request: { service: string },
    options: grpc.CallOptions,
    callback: grpc.requestCallback<{ status: string }>,
  ): grpc.ClientUnaryCall;
  watch(request: { service: string }): grpc.ClientReadableStream<{ status: string }>;
}

const healthPackage = grpc.loadPackageDefinition(
  protoLoader.loadSync(healthProtoPath, { keepCase: true, enums: String, defaults: true }),
) as unknown as {
  grpc: { health: { v1: { Health: new (address: string, credentials: grpc.ChannelCredentials) => HealthClient } } };
};

export function healthClient(address: string): HealthClient {
  return new healthPackage.grpc.health.v1.Health(address, grpc.credentials.createInsecure());
}

export function checkHealth(client: HealthClient, service: string): Promise<string> {
  return new Promise((resolve, reject) => {
    client.check({ service }, { deadline: Date.now() + 5_000 }, (error, response) =>
      error ? reject(error) : resolve(response?.status ?? 'none'),
    );
  });
}

/** A server on a random local port, shut down (forced) by `dispose`. */
export async function startServer(setup: (server: GrpcServer) => void, options: GrpcServerOptions = {}) {
  const server = createGrpcServer(options);
  setup(server);
  const port = await server.listen('127.0.0.1', 0);
  return { server, address: `127.0.0.1:${port}`, dispose: () => server.shutdown({ graceMs: 0 }) };
}
