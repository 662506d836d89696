import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './port.js';
import { waitFor } from './wait.js';

/** Where the NATS server of a test file came from. */
export type NatsSource = 'NATS_URL' | 'spawned' | 'default-port' | 'none';

/**
 * A NATS server (with JetStream) for one test file. `url` is undefined only outside CI when no
 * server could be found; a suite then skips with `describe.skipIf(!nats.url)`. Disposing stops
 * a server this fixture started and deletes its storage; it leaves other servers alone.
 */
export interface NatsFixture extends AsyncDisposable {
  readonly url: string | undefined;
  readonly source: NatsSource;
  /** Why there is no server; set exactly when url is undefined. */
  readonly skipReason?: string;
  /** JetStream storage of a spawned server, deleted on dispose. */
  readonly storeDir?: string;
}

export interface StartNatsOptions {
  /** Defaults to process.env; NATS_URL and CI are read from it. */
  env?: Readonly<Record<string, string | undefined>>;
  /** The server binary; defaults to `nats-server` from PATH. */
  binary?: string;
  /** The server to try when no binary can be started. */
  defaultUrl?: string;
  /** How long a started server may take to accept connections. */
  readyTimeoutMs?: number;
}

const DEFAULT_URL = 'nats://127.0.0.1:4222';
const SPAWN_ATTEMPTS = 3;
const LOG_TAIL_CHARS = 4_000;

/**
 * Finds or starts the NATS server for a test file, in this order: NATS_URL when set (it must
 * answer); a fresh `nats-server -js` on a free port with its own storage directory; the
 * default port when no binary is on PATH. When nothing answers it throws in CI (NATS suites
 * must fail there, never skip) and otherwise returns a fixture without url, after a loud notice.
 */
export async function startNats(options: StartNatsOptions = {}): Promise<NatsFixture> {
  const env = options.env ?? process.env;
  const configured = env.NATS_URL;
  if (configured) {
    if (!(await answersNats(configured))) {
      throw new Error(`NATS_URL is set to ${configured}, but no NATS server answers there`);
    }
    return externalServer(configured, 'NATS_URL');
  }

  const spawned = await spawnNatsServer(options.binary ?? 'nats-server', options.readyTimeoutMs ?? 10_000);
  if (spawned) return spawned;

  const fallback = options.defaultUrl ?? DEFAULT_URL;
  if (await answersNats(fallback)) return externalServer(fallback, 'default-port');

  const reason = `no nats-server binary on PATH and nothing answers on ${fallback}`;
  if (env.CI) {
    throw new Error(`NATS-backed tests cannot run: ${reason}. Install nats-server or set NATS_URL.`);
  }
  console.warn(
    [
      '',
      '!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!',
      `!!  SKIPPING NATS-backed tests: ${reason}.`,
      '!!  Install nats-server or set NATS_URL to run them (in CI they fail instead).',
      '!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!',
      '',
    ].join('\n'),
  );
  return { url: undefined, source: 'none', skipReason: reason, [Symbol.asyncDispose]: async () => {} };
}

function externalServer(url: string, source: NatsSource): NatsFixture {
  return { url, source, [Symbol.asyncDispose]: async () => {} };
}

/**
 * Whether a NATS server answers at `url`: it must send its INFO line, so a port taken by
 * something else does not pass. Only the first server of a comma-separated list is checked.
 */
export async function answersNats(url: string, timeoutMs = 1_000): Promise<boolean> {
  const first = url.split(',')[0]?.trim() ?? '';
  let host: string;
  let port: number;
  try {
    const parsed = new URL(first.includes('://') ? first : `nats://${first}`);
    host = parsed.hostname;
    port = parsed.port === '' ? 4222 : Number(parsed.port);
  } catch {
    return false;
  }
  return new Promise((resolve) => {
    const socket = createConnection({ host, port });
    let received = '';
    const finish = (answered: boolean) => {
      socket.destroy();
      resolve(answered);
    };
    socket.setTimeout(timeoutMs, () => finish(false));
    socket.once('error', () => finish(false));
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      if (received.length >= 5) finish(received.startsWith('INFO '));
    });
  });
}

async function spawnNatsServer(binary: string, readyTimeoutMs: number): Promise<NatsFixture | undefined> {
  let lastFailure = '';
  for (let attempt = 1; attempt <= SPAWN_ATTEMPTS; attempt++) {
    const storeDir = await mkdtemp(join(tmpdir(), 'hopline-nats-'));
    const port = await freePort();
    const child = spawn(binary, ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', storeDir], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let log = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      log = (log + chunk.toString('utf8')).slice(-LOG_TAIL_CHARS);
    });
    const exited = exitOf(child);
    let spawnError: NodeJS.ErrnoException | undefined;
    child.once('error', (error: NodeJS.ErrnoException) => {
      spawnError = error;
    });

    const url = `nats://127.0.0.1:${port}`;
    const ready = await waitFor(
      async () => spawnError !== undefined || child.exitCode !== null || (await answersNats(url, 200)),
      {
        timeoutMs: readyTimeoutMs,
        description: `nats-server on port ${port} to accept connections`,
      },
    ).catch(() => false);

    if (spawnError?.code === 'ENOENT') {
      await rm(storeDir, { recursive: true, force: true });
      return undefined;
    }
    if (ready && spawnError === undefined && child.exitCode === null) {
      return {
        url,
        source: 'spawned',
        storeDir,
        [Symbol.asyncDispose]: async () => {
          await stopProcess(child, exited);
          await rm(storeDir, { recursive: true, force: true });
        },
      };
    }
    // Another process may have taken the port between freePort() and the server's bind.
    lastFailure = spawnError ? spawnError.message : `exit code ${String(child.exitCode)}, log:\n${log}`;
    await stopProcess(child, exited);
    await rm(storeDir, { recursive: true, force: true });
  }
  throw new Error(`${binary} did not start after ${SPAWN_ATTEMPTS} attempts: ${lastFailure}`);
}

function exitOf(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', () => resolve());
  });
}

async function stopProcess(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  child.kill('SIGTERM');
  const killTimer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(killTimer);
}

/**
 * A nats-server child process of a test's own, for faults: `stop()` ends it (SIGTERM, or
 * `kill('SIGKILL')` for a crash) and `start()` brings it back on the same port with the same
 * JetStream storage, as an operator's restart would.
 */
export interface NatsServerProcess extends AsyncDisposable {
  readonly url: string;
  readonly port: number;
  start(): Promise<void>;
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** What the server wrote to stderr since it first started. */
  log(): string;
}

/** Starts a restartable nats-server; undefined when no binary is on PATH (the caller skips). */
export async function startNatsServer(
  options: {
    binary?: string;
    readyTimeoutMs?: number;
    /**
     * A configuration file's text (users, permissions, TLS); port, address, JetStream and its
     * storage are set on the command line, which wins over the file.
     */
    config?: string;
  } = {},
): Promise<NatsServerProcess | undefined> {
  const binary = options.binary ?? 'nats-server';
  const readyTimeoutMs = options.readyTimeoutMs ?? 10_000;
  const storeDir = await mkdtemp(join(tmpdir(), 'hopline-nats-'));
  const port = await freePort();
  const url = `nats://127.0.0.1:${port}`;
  const args = ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', storeDir];
  if (options.config !== undefined) {
    const configFile = join(storeDir, 'nats-server.conf');
    await writeFile(configFile, options.config);
    args.push('-c', configFile);
  }
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let log = '';

  const start = async () => {
    const process = spawn(binary, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    // Kept whole: a test reads it for the server's refusals (permission violations).
    process.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString('utf8')));
    let spawnError: NodeJS.ErrnoException | undefined;
    process.once('error', (error: NodeJS.ErrnoException) => (spawnError = error));
    child = process;
    exited = exitOf(process);
    await waitFor(async () => spawnError !== undefined || process.exitCode !== null || (await answersNats(url, 200)), {
      timeoutMs: readyTimeoutMs,
      description: `nats-server on port ${port} to accept connections`,
    });
    if (spawnError) throw spawnError;
    if (process.exitCode !== null) throw new Error(`nats-server on port ${port} exited with ${process.exitCode}`);
  };
  const stop = async (signal: NodeJS.Signals = 'SIGTERM') => {
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    child.kill(signal);
    await exited;
  };

  try {
    await start();
  } catch (error) {
    await rm(storeDir, { recursive: true, force: true });
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  return {
    url,
    port,
    start,
    stop,
    log: () => log,
    [Symbol.asyncDispose]: async () => {
      await stop();
      await rm(storeDir, { recursive: true, force: true });
    },
  };
}
