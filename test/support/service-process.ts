import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePort, waitFor } from '@hopline/test-support';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const OPS_PORT_ATTEMPTS = 3;

/**
 * One Hopline service as its own process, started the way its package's `start` script does,
 * that a test can freeze (SIGSTOP), thaw, kill and start again on the same ports.
 */
export interface ServiceProcess extends AsyncDisposable {
  readonly opsUrl: string;
  /** Everything it printed, for failure messages. */
  output(): string;
  signal(signal: NodeJS.Signals): void;
  /** Kills it (SIGKILL) and waits for the exit. */
  kill(): Promise<void>;
  /**
   * Starts it again on the same ports with the same environment, plus `overrides` for this run
   * only; resolves once /healthz is ok.
   */
  restart(overrides?: Record<string, string>): Promise<void>;
  /** Whether the process is running (it may be frozen). */
  readonly running: boolean;
  /** Resolves once /healthz answers 200. */
  healthy(timeoutMs?: number): Promise<void>;
}

export async function startServiceProcess(
  service: 'retrieval-worker' | 'reranker' | 'query-understanding' | 'hop-reasoner' | 'answer-gateway',
  env: Record<string, string>,
  /** How long a start or restart may take to report healthy: more on a loaded machine. */
  { startupTimeoutMs = 60_000 }: { startupTimeoutMs?: number } = {},
): Promise<ServiceProcess> {
  let opsPort = await freePort();
  let lines: string[] = [];
  let child: ChildProcess;
  let exited: Promise<void>;
  const spawnIt = (overrides: Record<string, string> = {}) => {
    child = spawn(
      process.execPath,
      ['--conditions=@hopline/source', '--import', 'tsx', '--import', './src/instrumentation.ts', './src/main.ts'],
      {
        cwd: `${repoRoot}services/${service}`,
        env: {
          PATH: process.env.PATH ?? '',
          OTEL_SDK_DISABLED: 'true',
          LOG_LEVEL: 'info',
          METRICS_PORT: String(opsPort),
          ...env,
          ...overrides,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    child.stdout?.on('data', (chunk: Buffer) => lines.push(chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => lines.push(chunk.toString()));
    exited = new Promise((resolve) => child.once('exit', () => resolve()));
  };
  const output = () => lines.join('');
  const opsUrl = () => `http://127.0.0.1:${opsPort}`;
  const stillRunning = () => child.exitCode === null && child.signalCode === null;
  // A process that exited will not become healthy: said at once, not after the whole timeout.
  const healthy = async (timeoutMs = startupTimeoutMs) => {
    const state = await waitFor(
      async () => {
        if (child.exitCode !== null) return 'exited';
        return (await fetch(`${opsUrl()}/healthz`).catch(() => undefined))?.ok === true ? 'healthy' : undefined;
      },
      { timeoutMs, description: `${service} to report healthy` },
    );
    if (state === 'exited') throw new Error(`${service} exited with ${child.exitCode}:\n${output()}`);
  };
  const kill = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGCONT');
    child.kill('SIGKILL');
    await exited;
  };

  // freePort() hands out a port from the range the OS also gives outgoing connections, and any
  // connect() made before the child binds may take it: a first start that loses its ops port
  // that way starts again on another one (the caller's own ports stay as they were given).
  for (let attempt = 1; ; attempt++) {
    spawnIt();
    const started = await healthy().then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    if (started === undefined) break;
    const timedOut = stillRunning();
    const lostOpsPort = output().includes(`EADDRINUSE: address already in use 127.0.0.1:${opsPort}`);
    await kill();
    if (lostOpsPort && attempt < OPS_PORT_ATTEMPTS) {
      opsPort = await freePort();
      lines = [];
      continue;
    }
    // An exit's error carries the output already; a timeout's does not.
    throw timedOut ? new Error(`${started.message}\n${output()}`) : started;
  }
  return {
    get opsUrl() {
      return opsUrl();
    },
    output,
    signal: (signal) => child.kill(signal),
    kill,
    healthy,
    async restart(overrides) {
      await kill();
      lines = [];
      spawnIt(overrides);
      await healthy();
    },
    get running() {
      return stillRunning();
    },
    [Symbol.asyncDispose]: kill,
  };
}
