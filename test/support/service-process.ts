import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePort, waitFor } from '@hopline/test-support';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

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
  const opsPort = await freePort();
  const opsUrl = `http://127.0.0.1:${opsPort}`;
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
  const healthy = (timeoutMs = startupTimeoutMs) =>
    waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`${service} exited with ${child.exitCode}:\n${output()}`);
        return (await fetch(`${opsUrl}/healthz`).catch(() => undefined))?.ok === true;
      },
      { timeoutMs, description: `${service} to report healthy` },
    ).then(() => undefined);
  const kill = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGCONT');
    child.kill('SIGKILL');
    await exited;
  };

  spawnIt();
  await healthy().catch(async (error: unknown) => {
    await kill();
    throw new Error(`${(error as Error).message}\n${output()}`);
  });
  return {
    opsUrl,
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
      return child.exitCode === null && child.signalCode === null;
    },
    [Symbol.asyncDispose]: kill,
  };
}
