import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { waitFor } from '@hopline/test-support';

export interface Proc {
  name: string;
  child: ChildProcess;
  output: () => string;
}

/** A TypeScript entry point run as the package scripts run it, its last output kept for errors. */
export function spawnNode(name: string, args: string[], cwd: string, env: Record<string, string>): Proc {
  return spawnWith(name, [...profiling(name), '--conditions=@hopline/source', '--import', 'tsx', ...args], cwd, env);
}

/**
 * `--cpu-prof` for the processes BENCH_CPU_PROF names (comma-separated, as the results name
 * them: hop-reasoner,reranker), written at their exit under BENCH_CPU_PROF_DIR/<name>: where a
 * service's CPU goes under the bench's own load. One file per thread; tsx's loader has its own.
 */
function profiling(name: string): string[] {
  if (!(process.env.BENCH_CPU_PROF ?? '').split(',').includes(name)) return [];
  return ['--cpu-prof', `--cpu-prof-dir=${join(process.env.BENCH_CPU_PROF_DIR ?? '.', name)}`];
}

function spawnWith(name: string, args: string[], cwd: string, env: Record<string, string>): Proc {
  const lines: string[] = [];
  const child = spawn(process.execPath, args, {
    cwd,
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const keep = (chunk: Buffer) => {
    lines.push(chunk.toString());
    if (lines.length > 200) lines.shift();
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return { name, child, output: () => lines.join('') };
}

/** A compiled entry point (dist/, as the Docker image runs it), its last output kept for errors. */
export function spawnCompiled(name: string, file: string, cwd: string, env: Record<string, string>): Proc {
  return spawnWith(name, [file], cwd, env);
}

/** SIGTERM, then SIGKILL if the process has not exited after `graceMs`. */
export async function stopProcess(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Waits until the process's /healthz answers 200 with a body `accept` takes. */
export async function healthy(
  proc: Proc,
  opsUrl: string,
  accept: (body: unknown) => boolean = () => true,
  timeoutMs = 120_000,
): Promise<void> {
  await waitFor(
    async () => {
      if (proc.child.exitCode !== null) throw new Error(`${proc.name} exited:\n${proc.output()}`);
      const response = await fetch(`${opsUrl}/healthz`).catch(() => undefined);
      return response?.ok === true && accept(await response.json());
    },
    { timeoutMs, intervalMs: 20, description: `${proc.name} to report healthy` },
  );
}
