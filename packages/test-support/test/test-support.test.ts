import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { answersNats, freePort, startNats, waitFor } from '../src/index.js';

describe('test-support', () => {
  it('freePort - returns a port that can be bound at once', async () => {
    const port = await freePort();
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', resolve);
    });
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('waitFor - resolves with the first truthy value of the predicate', async () => {
    let calls = 0;
    const value = await waitFor(() => (++calls >= 3 ? `after ${calls}` : undefined), { intervalMs: 1 });
    expect(value).toBe('after 3');
  });

  it('waitFor - times out naming the condition and keeping the last error', async () => {
    const failure = waitFor(
      () => {
        throw new Error('not yet');
      },
      { timeoutMs: 30, intervalMs: 5, description: 'the moon to rise' },
    );
    await expect(failure).rejects.toThrow(/the moon to rise not met within 30 ms/);
    await expect(failure).rejects.toHaveProperty('cause.message', 'not yet');
  });

  it('answersNats - a TCP port that is not NATS does not count', async () => {
    const server = createServer((socket) => socket.end('HTTP/1.1 400 Bad Request\r\n\r\n'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no address');
    expect(await answersNats(`nats://127.0.0.1:${address.port}`)).toBe(false);
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('startNats - spawns a JetStream server on a free port and removes it on dispose', async () => {
    const nats = await startNats({ env: {} });
    expect(nats.source).toBe('spawned');
    const url = nats.url ?? '';
    expect(await answersNats(url)).toBe(true);
    await nats[Symbol.asyncDispose]();
    expect(await answersNats(url, 200)).toBe(false);
  });

  it('startNats - uses NATS_URL when set and leaves that server running', async () => {
    await using own = await startNats({ env: {} });
    const viaEnv = await startNats({ env: { NATS_URL: own.url } });
    expect(viaEnv).toMatchObject({ url: own.url, source: 'NATS_URL' });
    await viaEnv[Symbol.asyncDispose]();
    expect(await answersNats(own.url ?? '')).toBe(true);
  });

  it('startNats - a NATS_URL where nothing answers is an error, not a skip', async () => {
    const port = await freePort();
    await expect(startNats({ env: { NATS_URL: `nats://127.0.0.1:${port}` } })).rejects.toThrow(
      /no NATS server answers/,
    );
  });

  it('startNats - without a binary it falls back to the default port when that answers', async () => {
    await using own = await startNats({ env: {} });
    const fallback = await startNats({ env: {}, binary: 'hopline-no-such-nats-server', defaultUrl: own.url });
    expect(fallback).toMatchObject({ url: own.url, source: 'default-port' });
  });

  it('startNats - with nothing available it throws in CI', async () => {
    const port = await freePort();
    const none = { binary: 'hopline-no-such-nats-server', defaultUrl: `nats://127.0.0.1:${port}` };
    await expect(startNats({ ...none, env: { CI: 'true' } })).rejects.toThrow(/NATS-backed tests cannot run/);
  });

  it('startNats - with nothing available outside CI it returns a skip marker', async () => {
    const port = await freePort();
    const fixture = await startNats({
      binary: 'hopline-no-such-nats-server',
      defaultUrl: `nats://127.0.0.1:${port}`,
      env: {},
    });
    expect(fixture.url).toBeUndefined();
    expect(fixture.source).toBe('none');
    expect(fixture.skipReason).toMatch(/no nats-server binary on PATH/);
  });

  it('startNats - a spawned server stores JetStream data in a directory deleted on dispose', async () => {
    const nats = await startNats({ env: {} });
    const storeDir = nats.storeDir ?? '';
    expect(existsSync(storeDir)).toBe(true);
    await nats[Symbol.asyncDispose]();
    expect(existsSync(storeDir)).toBe(false);
  });
});
