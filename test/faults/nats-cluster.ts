import { startNatsCluster, waitFor, type NatsNode } from '@hopline/test-support';
import { askStreaming, demoQuestions, tally } from './client.js';
import { BULK_KB, indexedChunks, startFleet, workerIndex } from './fleet.js';
import { describeTally, type ScenarioResult } from './scenarios.js';

/** A scenario with a fleet of its own: the three-node cluster's. */
export const clusterNodeLoss = {
  id: 'cluster-node-loss',
  fault:
    'three-node nats-server cluster (three processes, loopback routes, `JETSTREAM_REPLICAS=3`), the node the services connect to killed under ingest and questions, then started again',
  mustHold: '0 acked documents lost; questions keep flowing; the node rejoins',
  async runAlone({ questions }: { questions: number }): Promise<ScenarioResult> {
    const started = await startNatsCluster({ name: 'hopline-faults' });
    if (started === undefined) throw new Error('the cluster scenario needs nats-server on PATH');
    await using cluster = started;
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
