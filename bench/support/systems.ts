// The systems bench/question.ts measures, started as a client meets them: `pnpm start`'s one
// process (embedded), or the five services as processes over a nats-server started here
// (distributed), each over the demo corpus, with the answer cache off and rate limits out of the
// way. Also what the bench reads of a process from outside (/proc) and the one question it asks.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hashApiKey } from '@hopline/answer-gateway';
import { loadDocuments, readSse } from '@hopline/cli';
import { freePort, waitFor } from '@hopline/test-support';
import { healthy, spawnNode, stopProcess, type Proc } from './processes.js';

const CLOCK_TICKS_PER_SECOND = 100;
const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const demoCorpus = join(repoRoot, 'packages/embedded/demo-corpus/docs');
/** The four questions of the demo corpus's README, asked in turn. */
export const QUESTIONS = [
  'Which department does the owner of Project Atlas belong to?',
  'How many titles did the coach of the team that won the 2031 Harbor Cup win as a player?',
  '天穹项目的负责人属于哪个部门？',
  'Which was founded first, Northwind Labs or Bluefin Analytics?',
];
const API_KEY = 'bench-question-key';
const TENANT = 'dev';
const KB = 'demo';

export type Format = 'json' | 'sse';

export interface System {
  httpUrl: string;
  /** Where the hop-reasoner's counters are (the only ops server in the embedded mode). */
  reasonerMetricsUrl: string;
  natsMonitorUrl?: string;
  processes: Proc[];
  stop(): Promise<void>;
}

/** CPU time (user + system) a process has used so far, in ms. */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
}

export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

export const benchEnv = {
  CACHE_MAX_ENTRIES: '0',
  // The hop-reasoner's default, named here because the floor of bench/question.ts copies it.
  EARLY_FIRST_RETRIEVAL: 'true',
  RATE_PER_KEY_PER_SECOND: '1000000',
  RATE_BURST_PER_KEY: '1000000',
  API_KEYS: JSON.stringify({
    keys: [{ keyHash: hashApiKey(API_KEY), tenantId: TENANT, userId: 'bench', kbIds: [KB], canIngest: true }],
  }),
};

/** `pnpm start`'s process, telemetry booted first as there; `env` adds to the bench's settings. */
export async function startEmbeddedProcess(dataDir: string, env: Record<string, string> = {}): Promise<System> {
  const [httpPort, opsPort] = [await freePort(), await freePort()];
  const args = ['--import', './packages/embedded/src/instrumentation.ts', 'packages/embedded/src/start.ts'];
  const proc = spawnNode('embedded', args, repoRoot, {
    ...benchEnv,
    ...env,
    DATA_DIR: join(dataDir, 'embedded'),
    HTTP_PORT: String(httpPort),
    GRPC_PORT: '0',
    METRICS_PORT: String(opsPort),
  });
  const opsUrl = `http://127.0.0.1:${opsPort}`;
  await healthy(proc, opsUrl);
  return {
    httpUrl: `http://127.0.0.1:${httpPort}`,
    reasonerMetricsUrl: `${opsUrl}/metrics`,
    processes: [proc],
    stop: () => stopProcess(proc.child),
  };
}

export async function startNatsServer(dataDir: string): Promise<{ url: string; monitorUrl: string; proc: Proc }> {
  const [port, monitorPort] = [await freePort(), await freePort()];
  const lines: string[] = [];
  const child = spawn(
    'nats-server',
    ['-js', '-a', '127.0.0.1', '-p', String(port), '-m', String(monitorPort), '-sd', join(dataDir, 'nats')],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  child.stderr?.on('data', (chunk: Buffer) => lines.push(chunk.toString()));
  const proc = { name: 'nats-server', child, output: () => lines.join('') };
  const monitorUrl = `http://127.0.0.1:${monitorPort}`;
  await waitFor(
    async () => {
      if (child.exitCode !== null) throw new Error(`nats-server exited:\n${proc.output()}`);
      return (await fetch(`${monitorUrl}/healthz`).catch(() => undefined))?.ok === true;
    },
    { timeoutMs: 20_000, description: 'nats-server to accept connections' },
  );
  return { url: `nats://127.0.0.1:${port}`, monitorUrl, proc };
}

/** The five services of the checkout at `root` (default this one) over a nats-server of their own. */
export async function startDistributed(dataDir: string, workers: 1 | 2, root = repoRoot): Promise<System> {
  const nats = await startNatsServer(dataDir);
  const [quPort, rerankPort, httpPort, gatewayGrpcPort] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  const services: Array<{ name: string; service: string; env: Record<string, string> }> = [
    { name: 'query-understanding', service: 'query-understanding', env: { GRPC_PORT: String(quPort) } },
    { name: 'reranker', service: 'reranker', env: { GRPC_PORT: String(rerankPort) } },
    ...Array.from({ length: workers }, (_, index) => ({
      name: `retrieval-worker-${index + 1}`,
      service: 'retrieval-worker',
      env: { DATA_DIR: join(dataDir, `retrieval-${index + 1}`), WORKER_ID: `worker-${index + 1}` },
    })),
    {
      name: 'hop-reasoner',
      service: 'hop-reasoner',
      env: {
        QUERY_UNDERSTANDING_ADDRESS: `127.0.0.1:${quPort}`,
        RERANKER_ADDRESS: `127.0.0.1:${rerankPort}`,
      },
    },
    {
      name: 'answer-gateway',
      service: 'answer-gateway',
      // Not the default 50051: another process on the machine may hold it.
      env: { ...benchEnv, HTTP_PORT: String(httpPort), GRPC_PORT: String(gatewayGrpcPort) },
    },
  ];
  const started: Array<{ proc: Proc; opsUrl: string }> = [];
  const stop = async () => {
    await Promise.all(started.map(({ proc }) => stopProcess(proc.child)));
    await stopProcess(nats.proc.child);
  };
  try {
    for (const { name, service, env } of services) {
      const opsPort = await freePort();
      const proc = spawnNode(
        name,
        ['--import', './src/instrumentation.ts', './src/main.ts'],
        join(root, 'services', service),
        { NATS_URL: nats.url, GRPC_HOST: '127.0.0.1', HTTP_HOST: '127.0.0.1', METRICS_PORT: String(opsPort), ...env },
      );
      started.push({ proc, opsUrl: `http://127.0.0.1:${opsPort}` });
    }
    for (const { proc, opsUrl } of started) await healthy(proc, opsUrl);
    const httpUrl = `http://127.0.0.1:${httpPort}`;
    const documents = loadDocuments(demoCorpus);
    const ingest = await fetch(`${httpUrl}/v1/kbs/${KB}/documents`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${API_KEY}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ documents }),
    });
    if (ingest.status !== 202) throw new Error(`ingestion answered ${ingest.status}: ${await ingest.text()}`);
    // Every worker indexes the whole stream (the workers of a queue group each hold every kb).
    for (const { proc, opsUrl } of started.filter(({ proc }) => proc.name.startsWith('retrieval-worker'))) {
      // Readiness names no kb: the fresh cluster's only kb is the index's whole.
      await healthy(proc, opsUrl, (body) => {
        const index = (body as { details: { index?: { lexicalChunks: number; vectorChunks: number } } }).details.index;
        return (
          index !== undefined && index.lexicalChunks >= documents.length && index.vectorChunks === index.lexicalChunks
        );
      });
    }
    return {
      httpUrl,
      reasonerMetricsUrl: `${started.find(({ proc }) => proc.name === 'hop-reasoner')?.opsUrl ?? ''}/metrics`,
      natsMonitorUrl: nats.monitorUrl,
      processes: [...started.map(({ proc }) => proc), nats.proc],
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * Asks one question; resolves with the HTTP status, or 'sse-error' for a stream that ended in an
 * error event. `onFirstEvent` is called as a stream's first event arrives (never for JSON).
 */
export async function ask(
  httpUrl: string,
  question: string,
  format: Format,
  onFirstEvent?: () => void,
): Promise<string> {
  const response = await fetch(`${httpUrl}/v1/ask`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${API_KEY}`,
      'Content-Type': 'application/json',
      ...(format === 'sse' ? { Accept: 'text/event-stream' } : {}),
    },
    body: JSON.stringify({ question, kbIds: [KB], maxHops: 3 }),
  });
  if (response.status !== 200 || format === 'json') {
    await response.arrayBuffer();
    return String(response.status);
  }
  let last = '';
  let first = true;
  for await (const event of readSse(response.body as ReadableStream<Uint8Array>)) {
    if (first) onFirstEvent?.();
    first = false;
    last = event.event;
  }
  return last === 'done' ? '200' : `sse-${last || 'cut'}`;
}
