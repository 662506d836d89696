import * as grpc from '@grpc/grpc-js';
import { connectNatsBus } from '@hopline/bus';
import { startNatsServer, waitFor } from '@hopline/test-support';
import { describe, expect, it } from 'vitest';
import { startGatewayOn, testKeys } from './support/harness.js';

const nats = await startNatsServer();

const SERVING = 1;
const NOT_SERVING = 2;

/** grpc.health.v1.Health/Check of the whole server (service ""), as the kubelet's gRPC probe asks it. */
function checkWholeServer(address: string): Promise<number> {
  const client = new grpc.Client(address, grpc.credentials.createInsecure());
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(
      '/grpc.health.v1.Health/Check',
      () => Buffer.alloc(0),
      (bytes: Buffer) => bytes,
      {},
      { deadline: Date.now() + 5_000 },
      (error, response) => {
        client.close();
        // HealthCheckResponse { status = 1 }: the field's tag, then the enum's value.
        if (error) reject(error);
        else resolve(response?.[0] === 0x08 ? (response[1] ?? 0) : 0);
      },
    );
  });
}

describe.skipIf(!nats)('answer-gateway gRPC health', () => {
  it('follows the gateway’s health: NOT_SERVING while NATS is down, SERVING once it is back', async () => {
    const server = nats!;
    const bus = await connectNatsBus({ url: server.url, name: 'answer-gateway' });
    const { gateway, grpcAddress } = await startGatewayOn(bus, testKeys());
    try {
      expect(await checkWholeServer(grpcAddress)).toBe(SERVING);
      await server.stop('SIGKILL');
      await waitFor(async () => (await checkWholeServer(grpcAddress)) === NOT_SERVING, {
        description: 'the gRPC health to turn NOT_SERVING',
      });
      expect(gateway.health()).toMatchObject({ ok: false, details: { bus: { connected: false } } });
      await server.start();
      await waitFor(async () => (await checkWholeServer(grpcAddress)) === SERVING, {
        description: 'the gRPC health to turn SERVING again',
        timeoutMs: 15_000,
      });
    } finally {
      await gateway.stop({ graceMs: 0 });
      await bus.drain();
      await server[Symbol.asyncDispose]();
    }
  }, 60_000);
});
