import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { answersNats, freePort, waitFor, type NatsServerProcess } from '@hopline/test-support';
import { askStreaming, demoQuestions, tally } from './client.js';
import { BULK_KB, indexedChunks, startFleet, workerIndex } from './fleet.js';
import { describeTally, type ScenarioResult } from './scenarios.js';

/** One node of a NATS cluster: a nats-server process that can be killed and started again. */
export interface NatsNode extends NatsServerProcess {
  /** Whether the node's JetStream is healthy and current (its monitoring /healthz). */
  current(): Promise<boolean>;
}

export interface NatsCluster extends AsyncDisposable {
  readonly nodes: readonly NatsNode[];
}

/**
 * A JetStream cluster of `size` nats-server processes on loopback, each with its own store
 * directory, routed to one another, as the chart's three-node cluster is.
 */
export async function startNatsCluster(size = 3): Promise<NatsCluster> {
  const ports = await Promise.all(Array.from({ length: size * 3 }, () => freePort()));
  const routeUrl = (index: number) => `nats://127.0.0.1:${ports[3 * index + 1]}`;
  const nodes: NatsNode[] = [];
  for (let index = 0; index < size; index += 1) {
    const [port, routePort, monitorPort] = ports.slice(3 * index, 3 * index + 3) as [number, number, number];
    const storeDir = await mkdtemp(join(tmpdir(), 'hopline-nats-cluster-'));
    const url = `nats://127.0.0.1:${port}`;
    const routes = Array.from({ length: size }, (_, other) => other)
      .filter((other) => other !== index)
      .map(routeUrl)
      .join(',');
    const args = [
      ...['-js', '-a', '127.0.0.1', '-p', String(port), '-m', String(monitorPort), '-sd', storeDir],
      ...['-n', `faults-${index + 1}`, '--cluster_name', 'hopline-faults'],
      ...['--cluster', `nats://127.0.0.1:${routePort}`, '--routes', routes],
    ];
    let child: ChildProcess | undefined;
    let exited: Promise<void> = Promise.resolve();
    let log = '';
    const stop = async (signal: NodeJS.Signals = 'SIGTERM') => {
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      child.kill(signal);
      await exited;
    };
    nodes.push({
      url,
      port,
      async start() {
        const process = spawn('nats-server', args, { stdio: ['ignore', 'ignore', 'pipe'] });
        process.stderr?.on('data', (chunk: Buffer) => {
          log = (log + chunk.toString('utf8')).slice(-4_000);
        });
        child = process;
        exited = new Promise((resolve) => process.once('exit', () => resolve()));
        await waitFor(() => answersNats(url, 200), { timeoutMs: 30_000, description: `cluster node ${index + 1}` });
      },
      stop,
      log: () => log,
      async current() {
        const response = await fetch(`http://127.0.0.1:${monitorPort}/healthz`).catch(() => undefined);
        return response?.ok === true;
      },
      async [Symbol.asyncDispose]() {
        await stop();
        await rm(storeDir, { recursive: true, force: true });
      },
    });
  }
  const cluster: NatsCluster = {
    nodes,
    async [Symbol.asyncDispose]() {
      await Promise.all(nodes.map((node) => node[Symbol.asyncDispose]()));
    },
  };
  try {
    await Promise.all(nodes.map((node) => node.start()));
    // JetStream elects its meta leader once the routes are up; only then can streams be made.
    await waitFor(async () => (await Promise.all(nodes.map((node) => node.current()))).every(Boolean), {
      timeoutMs: 60_000,
      intervalMs: 250,
      description: 'the cluster to elect a JetStream leader',
    });
  } catch (error) {
    await cluster[Symbol.asyncDispose]();
    throw error;
  }
  return cluster;
}

/** A scenario with a fleet of its own: the three-node cluster's. */
export const clusterNodeLoss = {
  id: 'cluster-node-loss',
  fault:
    'three-node nats-server cluster (three processes, loopback routes, `JETSTREAM_REPLICAS=3`), the node the services connect to killed under ingest and questions, then started again',
  mustHold: '0 acked documents lost; questions keep flowing; the node rejoins',
  async runAlone({ questions }: { questions: number }): Promise<ScenarioResult> {
    await using cluster = await startNatsCluster();
    const [entry] = cluster.nodes as [NatsNode];
    await using fleet = await startFleet({ nats: entry, env: { JETSTREAM_REPLICAS: '3' } });
    const asks = demoQuestions('cluster-node-loss', questions).map((question, index) =>
      askStreaming(fleet.gatewayUrls[index % 2] as string, fleet.apiKey, question, { giveUpMs: 45_000 }),
    );
    const before = await Promise.all(fleet.workers.map(indexedChunks));
    const total = 300;
    const perRequest = 50;
    let accepted = 0;
    let refused = 0;
    for (let first = 0; first < total; first += perRequest) {
      if (first === perRequest) await entry.stop('SIGKILL');
      const documents = Array.from({ length: perRequest }, (_, i) => ({
        docId: `cluster-${first + i}`,
        title: `Cluster ${first + i}`,
        text: `Cluster document ${first + i} records serial number C${first + i}.`,
      }));
      const response = await fetch(`${fleet.gatewayUrls[first % 2 === 0 ? 0 : 1]}/v1/kbs/${BULK_KB}/documents`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${fleet.apiKey}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ documents }),
      }).catch(() => undefined);
      await response?.body?.cancel();
      if (response?.status === 202) accepted += perRequest;
      else refused += perRequest;
    }
    const t = tally(await Promise.all(asks));
    await entry.start();
    const rejoined = await waitFor(() => entry.current(), { timeoutMs: 60_000, intervalMs: 250 }).catch(() => false);
    // Each document is one chunk: what a worker holds beyond its start is what it indexed.
    const added = async () =>
      (await Promise.all(fleet.workers.map(workerIndex))).map((index, i) => ({
        lag: index.lag,
        chunks: index.chunks - (before[i] ?? 0),
      }));
    const indexes = await waitFor(
      async () => {
        const now = await added();
        return now.every((index) => index.lag === 0 && index.chunks >= accepted) ? now : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    ).catch(added);
    const chunks = indexes.map((index) => index.chunks);
    return {
      measured: `${accepted}/${total} documents acked (${refused} refused while the node was away), the indexes hold ${chunks.join(' and ')}; questions: ${describeTally(t)}; the node ${rejoined ? 'rejoined, current' : 'did not report current'}`,
      holds:
        chunks.every((n) => n >= accepted) &&
        t.answered >= Math.ceil(0.9 * t.asked) &&
        t.hung === 0 &&
        rejoined === true,
      tally: t,
    };
  },
};
