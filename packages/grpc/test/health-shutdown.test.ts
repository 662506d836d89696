import * as grpc from '@grpc/grpc-js';
import { CancelledError, UnavailableError, type RerankResponse } from '@hopline/contracts';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createClient, unaryCall, type CallContext } from '../src/index.js';
import { checkHealth, healthClient, hopline, startServer, type HealthClient } from './fixtures.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function rerankServer(handler: (call: CallContext) => Promise<RerankResponse> = async () => ({ scorer: 'ok' })) {
  const fixture = await startServer((server) =>
    server.addService(hopline.Reranker, { Rerank: (_request, call) => handler(call) }),
  );
  const health = healthClient(fixture.address);
  cleanups.push(fixture.dispose, () => health.close());
  return { ...fixture, health };
}

function watch(client: HealthClient, service: string) {
  const statuses: string[] = [];
  const stream = client.watch({ service });
  stream.on('data', (message: { status: string }) => statuses.push(message.status));
  stream.on('error', () => undefined);
  cleanups.push(() => stream.cancel());
  return statuses;
}

describe('gRPC health', () => {
  it('health - the server and each added service answer SERVING', async () => {
    const { health } = await rerankServer();
    await expect(checkHealth(health, '')).resolves.toBe('SERVING');
    await expect(checkHealth(health, 'hopline.v1.Reranker')).resolves.toBe('SERVING');
  });

  it('health - an unknown service is NOT_FOUND', async () => {
    const { health } = await rerankServer();
    await expect(checkHealth(health, 'hopline.v1.Nope')).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
  });

  it('health - setServing turns a service NOT_SERVING and back, and Watch streams the changes', async () => {
    const { server, health } = await rerankServer();
    const statuses = watch(health, 'hopline.v1.Reranker');
    await vi.waitFor(() => expect(statuses).toEqual(['SERVING']));
    server.setServing('hopline.v1.Reranker', false);
    await expect(checkHealth(health, 'hopline.v1.Reranker')).resolves.toBe('NOT_SERVING');
    server.setServing('hopline.v1.Reranker', true);
    await vi.waitFor(() => expect(statuses).toEqual(['SERVING', 'NOT_SERVING', 'SERVING']));
  });

  it('health - setAllServing turns the whole server and every service NOT_SERVING and back, but not once shutdown began', async () => {
    const { server, health } = await rerankServer();
    server.setAllServing(false);
    await expect(checkHealth(health, '')).resolves.toBe('NOT_SERVING');
    await expect(checkHealth(health, 'hopline.v1.Reranker')).resolves.toBe('NOT_SERVING');
    server.setAllServing(true);
    await expect(checkHealth(health, '')).resolves.toBe('SERVING');
    await expect(checkHealth(health, 'hopline.v1.Reranker')).resolves.toBe('SERVING');
    const stopped = server.shutdown({ drainMs: 500 });
    server.setAllServing(true);
    await expect(checkHealth(health, '')).resolves.toBe('NOT_SERVING');
    await stopped;
  });

  it('health - a Watch stream hears of changes only: setting the status it has sends nothing', async () => {
    const { server, health } = await rerankServer();
    const statuses = watch(health, '');
    await vi.waitFor(() => expect(statuses).toEqual(['SERVING']));
    for (let i = 0; i < 5; i++) server.setAllServing(true);
    server.setAllServing(false);
    await vi.waitFor(() => expect(statuses).toEqual(['SERVING', 'NOT_SERVING']));
  });

  it('health - once shutdown begins every status is NOT_SERVING while the drain lasts, then Watch streams end cleanly', async () => {
    const { server, health } = await rerankServer();
    const statuses: string[] = [];
    const stream = health.watch({ service: '' });
    stream.on('data', (message: { status: string }) => statuses.push(message.status));
    const watchEnded = new Promise<string>((resolve) => {
      stream.on('status', (status: grpc.StatusObject) => resolve(grpc.status[status.code]));
      stream.on('error', () => undefined);
    });
    await vi.waitFor(() => expect(statuses).toEqual(['SERVING']));

    const begun = Date.now();
    const stopped = server.shutdown({ drainMs: 1_000, graceMs: 20_000 });
    await expect(checkHealth(health, '')).resolves.toBe('NOT_SERVING');
    await expect(checkHealth(health, 'hopline.v1.Reranker')).resolves.toBe('NOT_SERVING');
    await vi.waitFor(() => expect(statuses).toEqual(['SERVING', 'NOT_SERVING']));
    await stopped;
    // An open Watch stream did not hold the graceful close until the grace period ran out.
    expect(Date.now() - begun).toBeLessThan(10_000);
    await expect(watchEnded).resolves.toBe('OK');
  });
});

describe('gRPC shutdown', () => {
  it('shutdown - an in-flight call finishes within the grace period', async () => {
    let release: () => void = () => undefined;
    const started: CallContext[] = [];
    const { server, address } = await rerankServer(
      (call) =>
        new Promise((resolve) => {
          started.push(call);
          release = () => resolve({ scorer: 'finished during shutdown' });
        }),
    );
    const client = createClient(hopline.Reranker, address);
    cleanups.push(() => client.close());
    const call = unaryCall(client, 'Rerank', {}, { deadlineUnixMs: Date.now() + 10_000 });
    await vi.waitFor(() => expect(started).toHaveLength(1));
    const stopped = server.shutdown({ graceMs: 10_000 });
    release();
    await expect(call).resolves.toMatchObject({ scorer: 'finished during shutdown' });
    await stopped;
  });

  it("shutdown - calls still running after the grace period are cancelled and their handlers' signals abort", async () => {
    const started: CallContext[] = [];
    const { server, address } = await rerankServer((call) => {
      started.push(call);
      return new Promise(() => undefined);
    });
    const client = createClient(hopline.Reranker, address);
    cleanups.push(() => client.close());
    const call = unaryCall(client, 'Rerank', {}, { deadlineUnixMs: Date.now() + 60_000 }).catch((e: unknown) => e);
    await vi.waitFor(() => expect(started).toHaveLength(1));
    await server.shutdown({ graceMs: 50 });
    await vi.waitFor(() => expect(started[0]?.signal.aborted).toBe(true));
    expect(started[0]?.signal.reason).toBeInstanceOf(CancelledError);
    // The client did not cancel: to its breaker and fallback the server went away.
    expect(await call).toBeInstanceOf(UnavailableError);
  });

  it('shutdown - a second shutdown waits for the first', async () => {
    const { server } = await rerankServer();
    const first = server.shutdown({ graceMs: 100 });
    const second = server.shutdown({ graceMs: 100 });
    await Promise.all([first, second]);
  });
});
