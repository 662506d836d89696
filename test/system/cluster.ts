import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, waitFor } from '@hopline/test-support';
import { hashApiKey } from '@hopline/answer-gateway';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

export const SERVICES = [
  'query-understanding',
  'reranker',
  'retrieval-worker',
  'hop-reasoner',
  'answer-gateway',
] as const;
export type ServiceName = (typeof SERVICES)[number];

export interface ClusterOptions {
  natsUrl: string;
  /** Extra environment for every service, e.g. OTEL_* to export traces. */
  env?: Record<string, string>;
}

export interface Cluster extends AsyncDisposable {
  gatewayUrl: string;
  gatewayGrpc: string;
  /** A key of tenant "acme" that may read and ingest kb "demo". */
  apiKey: string;
  opsPorts: Record<ServiceName, number>;
  /** Everything each process printed, for failure messages. */
  output(service: ServiceName): string;
  /** SIGKILLs one service, as a crash would, and resolves once it is gone. */
  kill(service: ServiceName): Promise<void>;
  /** Kills one service and starts it again with `env` added to its own, on the same ports; resolves once it is healthy. */
  restart(service: ServiceName, env: Record<string, string>): Promise<void>;
}

/**
 * The five services as five child processes, each started the way an operator would start
 * it (its package's `start` command line), configured by environment variables only.
 */
export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  const dataDir = mkdtempSync(join(tmpdir(), 'hopline-cluster-'));
  const apiKey = 'test-key-acme';
  const [quPort, rerankPort, httpPort, grpcPort, ...opsList] = await Promise.all([
    freePort(),
    freePort(),
    freePort(),
    freePort(),
    ...SERVICES.map(() => freePort()),
  ]);
  const opsPorts = Object.fromEntries(SERVICES.map((name, index) => [name, opsList[index] as number])) as Record<
    ServiceName,
    number
  >;
  const perService: Record<ServiceName, Record<string, string>> = {
    'query-understanding': { GRPC_HOST: '127.0.0.1', GRPC_PORT: String(quPort) },
    reranker: { GRPC_HOST: '127.0.0.1', GRPC_PORT: String(rerankPort) },
    'retrieval-worker': { NATS_URL: options.natsUrl, DATA_DIR: join(dataDir, 'retrieval'), WORKER_ID: 'worker-1' },
    'hop-reasoner': {
      NATS_URL: options.natsUrl,
      QUERY_UNDERSTANDING_ADDRESS: `127.0.0.1:${quPort}`,
      RERANKER_ADDRESS: `127.0.0.1:${rerankPort}`,
    },
    'answer-gateway': {
      NATS_URL: options.natsUrl,
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: String(httpPort),
      GRPC_HOST: '127.0.0.1',
      GRPC_PORT: String(grpcPort),
      API_KEYS: JSON.stringify({
        keys: [{ keyHash: hashApiKey(apiKey), tenantId: 'acme', userId: 'ci', kbIds: ['demo'], canIngest: true }],
      }),
    },
  };

  const outputs = new Map<ServiceName, string[]>();
  const children = new Map<ServiceName, ChildProcess>();
  const launch = (name: ServiceName, env: Record<string, string> = {}) => {
    const lines = outputs.get(name) ?? [];
    outputs.set(name, lines);
    const child = spawn(
      process.execPath,
      ['--conditions=@hopline/source', '--import', 'tsx', '--import', './src/instrumentation.ts', './src/main.ts'],
      {
        cwd: join(repoRoot, 'services', name),
        env: {
          PATH: process.env.PATH ?? '',
          LOG_LEVEL: 'info',
          METRICS_PORT: String(opsPorts[name]),
          ...options.env,
          ...perService[name],
          ...env,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    child.stdout?.on('data', (chunk: Buffer) => lines.push(chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => lines.push(chunk.toString()));
    children.set(name, child);
  };
  for (const name of SERVICES) launch(name);
  const output = (name: ServiceName) => (outputs.get(name) ?? []).join('');
  const healthy = (name: ServiceName) =>
    waitFor(
      async () => {
        const child = children.get(name);
        if (child?.exitCode !== null) throw new Error(`${name} exited with ${child?.exitCode}:\n${output(name)}`);
        const response = await fetch(`http://127.0.0.1:${opsPorts[name]}/healthz`).catch(() => undefined);
        return response?.ok === true;
      },
      { timeoutMs: 90_000, description: `${name} to report healthy` },
    );
  const kill = async (name: ServiceName) => {
    const child = children.get(name);
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  };

  const stop = async () => {
    await Promise.all(
      [...children.values()].map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
            child.once('exit', () => {
              clearTimeout(kill);
              resolve();
            });
            child.kill('SIGTERM');
          }),
      ),
    );
    rmSync(dataDir, { recursive: true, force: true });
  };

  try {
    for (const name of SERVICES) await healthy(name);
  } catch (error) {
    await stop();
    // What the services printed is what says why one never became healthy.
    throw new Error(
      `${(error as Error).message}\n${SERVICES.map((name) => `--- ${name}:\n${output(name)}`).join('\n')}`,
      {
        cause: error,
      },
    );
  }

  return {
    gatewayUrl: `http://127.0.0.1:${httpPort}`,
    gatewayGrpc: `127.0.0.1:${grpcPort}`,
    apiKey,
    opsPorts,
    output,
    kill,
    restart: async (name, env) => {
      await kill(name);
      launch(name, env);
      await healthy(name);
    },
    [Symbol.asyncDispose]: stop,
  };
}
