import { startNatsCluster, waitFor, type NatsNode } from '@hopline/test-support';
import { setTimeout as sleep } from 'node:timers/promises';
import { askStreaming, demoQuestions, tally, type AskOutcome } from './client.js';
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
      askHonouringRetryAfter(fleet.gatewayUrls[index % 2] as string, fleet.apiKey, question, 45_000),
    );
    const before = await Promise.all(fleet.workers.map(indexedChunks));
    const total = 300;
    const perRequest = 50;
    let accepted = 0;
    let refused = 0;
    let sentAgain = 0;
    for (let first = 0; first < total; first += perRequest) {
      if (first === perRequest) await entry.stop('SIGKILL');
      const documents = Array.from({ length: perRequest }, (_, i) => ({
        docId: `cluster-${first + i}`,
        title: `Cluster ${first + i}`,
        text: `Cluster document ${first + i} records serial number C${first + i}.`,
      }));
      const ingest = await ingestHonouringRetryAfter(
        `${fleet.gatewayUrls[first % 2 === 0 ? 0 : 1]}/v1/kbs/${BULK_KB}/documents`,
        fleet.apiKey,
        documents,
        30_000,
      );
      sentAgain += ingest.refusals;
      if (ingest.status === 202) accepted += perRequest;
      else refused += perRequest;
    }
    const asked = await Promise.all(asks);
    const t = tally(asked.map(({ outcome }) => outcome));
    const askedAgain = asked.filter(({ refusals }) => refusals > 0).length;
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
      measured: `${accepted}/${total} documents acked (${sentAgain} requests of ${perRequest} sent again after a 503 with Retry-After while the node was away, ${refused} documents given up), the indexes hold ${chunks.join(' and ')}; questions: ${describeTally(t)} (${askedAgain} asked again after a refusal with Retry-After while the node was away); the node ${rejoined ? 'rejoined, current' : 'did not report current'}`,
      holds:
        chunks.every((n) => n >= accepted) &&
        t.answered >= Math.ceil(0.9 * t.asked) &&
        t.hung === 0 &&
        rejoined === true,
      tally: t,
    };
  },
};

/**
 * What a client that honours Retry-After ends with: `attempt` made again after the delay a
 * refusal (429 or 503) names, until the client's own limit (`until`, ms since the epoch). The
 * result is the last attempt's; `refusals` counts those before it.
 */
async function honouringRetryAfter<T extends { status: number | undefined; retryAfter: string | null | undefined }>(
  until: number,
  attempt: () => Promise<T>,
): Promise<{ last: T; refusals: number }> {
  let refusals = 0;
  for (;;) {
    const last = await attempt();
    const waitMs = Number(last.retryAfter) * 1000;
    const refused = last.status === 429 || last.status === 503;
    if (!refused || !(waitMs > 0) || Date.now() + waitMs >= until) return { last, refusals };
    refusals += 1;
    await sleep(waitMs);
  }
}

/**
 * Asks as a client that honours Retry-After: a question refused while the gateway's node is away
 * (503 "message bus unavailable", by design at once rather than after the accept timeout) is
 * asked again.
 */
async function askHonouringRetryAfter(
  gatewayUrl: string,
  apiKey: string,
  question: string,
  giveUpMs: number,
): Promise<{ outcome: AskOutcome; refusals: number }> {
  const until = Date.now() + giveUpMs;
  const { last, refusals } = await honouringRetryAfter(until, () =>
    askStreaming(gatewayUrl, apiKey, question, { giveUpMs: Math.max(1, until - Date.now()) }),
  );
  return { outcome: last, refusals };
}

/**
 * Ingests as a client that honours Retry-After: a request refused while the gateway's node is
 * away is sent again, the same documents. A document a refused request had already queued is
 * queued again at a later version, which replaces it: nothing doubles.
 */
async function ingestHonouringRetryAfter(
  url: string,
  apiKey: string,
  documents: ReadonlyArray<{ docId: string; title: string; text: string }>,
  giveUpMs: number,
): Promise<{ status: number | undefined; refusals: number }> {
  const { last, refusals } = await honouringRetryAfter(Date.now() + giveUpMs, async () => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ documents }),
    }).catch(() => undefined);
    await response?.body?.cancel();
    return { status: response?.status, retryAfter: response?.headers.get('retry-after') };
  });
  return { status: last.status, refusals };
}
