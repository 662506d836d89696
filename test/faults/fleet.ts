import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hashApiKey } from '@hopline/answer-gateway';
import { loadDocuments } from '@hopline/cli';
import { freePort, startNatsServer, waitFor, type NatsServerProcess } from '@hopline/test-support';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';

const demoCorpus = fileURLToPath(new URL('../../packages/embedded/demo-corpus/docs', import.meta.url));

/** The kb the fleet's key reads and writes, filled with the demo corpus. */
export const FLEET_KB = 'demo';
/** Eight processes starting at once on a busy machine each get a small share of its CPUs. */
const STARTUP_TIMEOUT_MS = 180_000;

/** A second kb of the key's, which the questions never read: where bulk ingestion goes. */
export const BULK_KB = 'bulk';

/**
 * What the fleet runs on and what its services are told beyond their ports. (The gateways'
 * per-key rate is always raised, so that the suite's bursts meet the fleet's capacity, not the
 * rate limit.)
 */
export interface FleetOptions {
  /** A NATS server (or a cluster's node) of the caller's, which the fleet leaves running. */
  nats?: NatsServerProcess;
  /** Environment for every service, e.g. JETSTREAM_REPLICAS for a cluster. */
  env?: Record<string, string>;
}

/**
 * The five services as separate processes over a nats-server of the fleet's own: one
 * query-understanding, one reranker, two retrieval workers on one host (each its own DATA_DIR,
 * no WORKER_ID, as an operator would start them), two hop-reasoners and two gateway replicas.
 */
export interface Fleet extends AsyncDisposable {
  readonly nats: NatsServerProcess;
  readonly queryUnderstanding: ServiceProcess;
  readonly reranker: ServiceProcess;
  readonly workers: readonly ServiceProcess[];
  readonly reasoners: readonly ServiceProcess[];
  readonly gateways: readonly ServiceProcess[];
  /** The HTTP base url of each gateway replica, in the order of `gateways`. */
  readonly gatewayUrls: readonly string[];
  /** host:port of each gRPC server: the gateway replicas', query-understanding's, the reranker's. */
  readonly grpc: { gateways: readonly string[]; queryUnderstanding: string; reranker: string };
  /** A key of tenant "acme" that may read and ingest FLEET_KB. */
  readonly apiKey: string;
  /** Documents of the demo corpus, all indexed by every worker once `startFleet` returns. */
  readonly documents: number;
  /** Every process running, none frozen, each healthy: what a scenario leaves behind. */
  restore(): Promise<void>;
  /** The last lines every process printed, for a failure message. */
  output(): string;
}

/**
 * A worker's index, from its /healthz: its chunks (all kbs together: the report carries totals)
 * and the ingest commands it has not applied yet.
 */
export async function workerIndex(worker: ServiceProcess): Promise<{ chunks: number; lag: number }> {
  const response = await fetch(`${worker.opsUrl}/healthz`);
  const health = (await response.json()) as {
    details?: { index?: { lexicalChunks?: number }; ingest?: { lag?: number } };
  };
  return { chunks: health.details?.index?.lexicalChunks ?? 0, lag: health.details?.ingest?.lag ?? 0 };
}

/** How many chunks a worker's index holds. */
export async function indexedChunks(worker: ServiceProcess): Promise<number> {
  return (await workerIndex(worker)).chunks;
}

export async function startFleet(options: FleetOptions = {}): Promise<Fleet> {
  const nats = options.nats ?? (await startNatsServer());
  if (!nats) throw new Error('the fault suite needs a nats-server binary on PATH');
  const ownsNats = options.nats === undefined;
  const dataDir = mkdtempSync(join(tmpdir(), 'hopline-faults-'));
  const started: ServiceProcess[] = [];
  const stop = async () => {
    await Promise.all(started.map((service) => service.kill()));
    if (ownsNats) await nats[Symbol.asyncDispose]();
    rmSync(dataDir, { recursive: true, force: true });
  };
  // Starts run side by side; one that fails must not leave the others running unowned.
  const pending: Array<Promise<unknown>> = [];
  const start = (service: Parameters<typeof startServiceProcess>[0], env: Record<string, string>) => {
    const all = { ...options.env, ...env };
    const starting = startServiceProcess(service, all, { startupTimeoutMs: STARTUP_TIMEOUT_MS }).then((process) => {
      started.push(process);
      return process;
    });
    pending.push(starting);
    return starting;
  };

  try {
    const apiKey = 'fault-suite-key';
    const [quPort, rerankPort] = await Promise.all([freePort(), freePort()]);
    const bus = { NATS_URL: nats.url };
    const [queryUnderstanding, reranker, ...workers] = await Promise.all([
      start('query-understanding', { GRPC_HOST: '127.0.0.1', GRPC_PORT: String(quPort) }),
      start('reranker', { GRPC_HOST: '127.0.0.1', GRPC_PORT: String(rerankPort) }),
      ...[1, 2].map((n) => start('retrieval-worker', { ...bus, DATA_DIR: join(dataDir, `worker-${n}`) })),
    ]);
    const reasoners = await Promise.all(
      [1, 2].map(() =>
        start('hop-reasoner', {
          ...bus,
          QUERY_UNDERSTANDING_ADDRESS: `127.0.0.1:${quPort}`,
          RERANKER_ADDRESS: `127.0.0.1:${rerankPort}`,
        }),
      ),
    );
    const keys = JSON.stringify({
      keys: [
        {
          keyHash: hashApiKey(apiKey),
          tenantId: 'acme',
          userId: 'faults',
          kbIds: [FLEET_KB, BULK_KB],
          canIngest: true,
        },
      ],
    });
    const gatewayUrls: string[] = [];
    const gatewayGrpc: string[] = [];
    const gateways: ServiceProcess[] = [];
    for (let i = 0; i < 2; i += 1) {
      // Taken just before the gateway binds them: picked with the others, seconds of the fleet's
      // start-up earlier, an outgoing connection meanwhile could take one (EADDRINUSE).
      const [httpPort, grpcPort] = await Promise.all([freePort(), freePort()]);
      gatewayUrls.push(`http://127.0.0.1:${httpPort}`);
      gatewayGrpc.push(`127.0.0.1:${grpcPort}`);
      gateways.push(
        await start('answer-gateway', {
          ...bus,
          HTTP_HOST: '127.0.0.1',
          HTTP_PORT: String(httpPort),
          GRPC_HOST: '127.0.0.1',
          GRPC_PORT: String(grpcPort),
          API_KEYS: keys,
          RATE_PER_KEY_PER_SECOND: '1000',
          RATE_BURST_PER_KEY: '1000',
        }),
      );
    }

    const documents = loadDocuments(demoCorpus);
    const ingest = await fetch(`${gatewayUrls[0]}/v1/kbs/${FLEET_KB}/documents`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ documents }),
    });
    if (ingest.status !== 202) throw new Error(`ingesting the demo corpus answered ${ingest.status}`);
    await waitFor(
      async () => (await Promise.all(workers.map(indexedChunks))).every((chunks) => chunks >= documents.length),
      { timeoutMs: 60_000, description: 'both workers to index the demo corpus' },
    );

    const all = [queryUnderstanding, reranker, ...workers, ...reasoners, ...gateways];
    return {
      nats,
      queryUnderstanding,
      reranker,
      workers,
      reasoners,
      gateways,
      gatewayUrls,
      grpc: {
        gateways: gatewayGrpc,
        queryUnderstanding: `127.0.0.1:${quPort}`,
        reranker: `127.0.0.1:${rerankPort}`,
      },
      apiKey,
      documents: documents.length,
      async restore() {
        for (const service of all) service.signal('SIGCONT');
        await Promise.all(all.map((service) => (service.running ? service.healthy() : service.restart())));
      },
      output: () => all.map((service) => service.output().slice(-3_000)).join('\n---\n'),
      [Symbol.asyncDispose]: stop,
    };
  } catch (error) {
    await Promise.allSettled(pending);
    await stop();
    throw error;
  }
}
