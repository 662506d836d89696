import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { chromium, type Browser } from 'playwright-core';

/**
 * Whether a tool the gateway's client tests need is installed. In CI a missing one fails the
 * suite (CI installs them); elsewhere the suite skips after a loud notice.
 */
export function requireTool(name: string, available: boolean, install: string): boolean {
  if (available) return true;
  if (process.env.CI) throw new Error(`${name} is missing, and CI must run this suite: ${install}`);
  console.warn(
    `\n!!!!!!!!\n!!  SKIPPING ${name} tests: ${name} is not installed (${install}). In CI they fail instead.\n!!!!!!!!\n`,
  );
  return false;
}

const CHROMIUM = '/usr/bin/chromium';

export const hasChromium = () => existsSync(CHROMIUM);

/** Headless Chromium as the web page tests drive it: no sandbox, GPU, QUIC or background traffic. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

export const PYTHON = '/usr/bin/python3';

export const hasPythonGrpc = () =>
  existsSync(PYTHON) && spawnSync(PYTHON, ['-c', 'import grpc, grpc_tools'], { stdio: 'ignore' }).status === 0;

export interface DroppingProxy {
  readonly url: string;
  /** Cuts every connection open now, as a network failure would; new ones are accepted. */
  dropAll(): void;
  close(): Promise<void>;
}

/** A TCP proxy in front of a local port, for dropping a client's connections mid-stream. */
export async function startDroppingProxy(targetPort: number): Promise<DroppingProxy> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
      socket.on('error', () => socket.destroy());
    }
    client.pipe(upstream).pipe(client);
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    dropAll: () => {
      for (const socket of sockets) socket.destroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
