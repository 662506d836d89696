// A service started the way the README says (`pnpm --filter <service> start`) stops on SIGTERM.
// pnpm runs a script under `sh -c` and signals that shell, not its children: a start script that
// did not `exec` node left the service running and listening after pnpm itself had exited.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, waitFor } from '@hopline/test-support';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../deploy/support/repo.js';
import { SERVICES } from './cluster.js';

const startScript = (folder: string): string =>
  (JSON.parse(readFileSync(join(repoRoot, folder, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts
    .start;

describe('start scripts', () => {
  it('start - every service and the embedded mode exec node, so the signal pnpm sends reaches the service', () => {
    for (const folder of [...SERVICES.map((name) => `services/${name}`), '.']) {
      expect(startScript(folder), folder).toMatch(/^exec node /);
    }
  });

  it('start - SIGTERM to `pnpm --filter <service> start` stops the service: it shuts down gracefully and its port closes', async () => {
    const [metricsPort, grpcPort] = [await freePort(), await freePort()];
    const pnpm = spawn('pnpm', ['--filter', '@hopline/query-understanding', 'start'], {
      cwd: repoRoot,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        METRICS_PORT: String(metricsPort),
        GRPC_HOST: '127.0.0.1',
        GRPC_PORT: String(grpcPort),
        OTEL_SDK_DISABLED: 'true',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group, so that whatever outlives pnpm can be found and stopped below.
      detached: true,
    });
    let output = '';
    pnpm.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    pnpm.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise((resolve) => pnpm.once('exit', resolve));
    const live = () =>
      fetch(`http://127.0.0.1:${metricsPort}/livez`).then(
        (response) => response.ok,
        () => false,
      );
    try {
      await waitFor(live, { timeoutMs: 90_000, description: 'the service started by pnpm to answer' });
      pnpm.kill('SIGTERM');
      await exited;
      await waitFor(async () => !(await live()), { timeoutMs: 20_000, description: 'the service to stop listening' });
      expect(output).toContain('"msg":"shutting down"');
      expect(output).toContain('"msg":"stopped"');
    } finally {
      // The signal above went to pnpm alone, as `kill <pid>` sends it; a service that outlived it is not left behind.
      try {
        process.kill(-(pnpm.pid as number), 'SIGKILL');
      } catch {
        // The group is gone: nothing outlived pnpm.
      }
    }
  }, 150_000);
});
