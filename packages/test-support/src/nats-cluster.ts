import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { answersNats, type NatsServerProcess } from './nats.js';
import { freePort } from './port.js';
import { waitFor } from './wait.js';

/** One node of a NATS cluster: a nats-server process that can be killed and started again. */
export interface NatsNode extends NatsServerProcess {
  /** The server's name, as JetStream reports where a stream's or consumer's leader is. */
  readonly name: string;
  /** Whether the node's JetStream is healthy and current (its monitoring /healthz). */
  current(): Promise<boolean>;
}

export interface NatsCluster extends AsyncDisposable {
  readonly nodes: readonly NatsNode[];
  /** The nodes' client URLs, comma-separated, as NATS_URL takes a cluster. */
  readonly url: string;
}

export interface StartNatsClusterOptions {
  /** How many nodes; defaults to 3, the chart's cluster. */
  size?: number;
  /** The cluster's name, and the stem of its nodes' names (`<name>-1`, …). */
  name?: string;
}

const LOG_TAIL_CHARS = 4_000;

/**
 * A JetStream cluster of nats-server processes on loopback, each with its own store directory,
 * routed to one another, as the chart's three-node cluster is. Resolves once every node's
 * JetStream is current; undefined when no nats-server binary is on PATH (the caller skips).
 */
export async function startNatsCluster(options: StartNatsClusterOptions = {}): Promise<NatsCluster | undefined> {
  const size = options.size ?? 3;
  const clusterName = options.name ?? 'hopline';
  const ports = await Promise.all(Array.from({ length: size * 3 }, () => freePort()));
  const routeUrl = (index: number) => `nats://127.0.0.1:${ports[3 * index + 1]}`;
  const nodes: NatsNode[] = [];
  for (let index = 0; index < size; index += 1) {
    const [port, routePort, monitorPort] = ports.slice(3 * index, 3 * index + 3) as [number, number, number];
    const storeDir = await mkdtemp(join(tmpdir(), 'hopline-nats-cluster-'));
    const url = `nats://127.0.0.1:${port}`;
    const name = `${clusterName}-${index + 1}`;
    const routes = Array.from({ length: size }, (_, other) => other)
      .filter((other) => other !== index)
      .map(routeUrl)
      .join(',');
    const args = [
      ...['-js', '-a', '127.0.0.1', '-p', String(port), '-m', String(monitorPort), '-sd', storeDir],
      ...['-n', name, '--cluster_name', clusterName],
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
      name,
      url,
      port,
      async start() {
        const process = spawn('nats-server', args, { stdio: ['ignore', 'ignore', 'pipe'] });
        let spawnError: NodeJS.ErrnoException | undefined;
        process.once('error', (error: NodeJS.ErrnoException) => (spawnError = error));
        process.stderr?.on('data', (chunk: Buffer) => {
          log = (log + chunk.toString('utf8')).slice(-LOG_TAIL_CHARS);
        });
        child = process;
        exited = new Promise((resolve) => process.once('exit', () => resolve()));
        await waitFor(async () => spawnError !== undefined || (await answersNats(url, 200)), {
          timeoutMs: 30_000,
          description: `cluster node ${name}`,
        });
        if (spawnError) throw spawnError;
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
    url: nodes.map((node) => node.url).join(','),
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
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  return cluster;
}
