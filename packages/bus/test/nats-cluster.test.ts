import { startNatsCluster, waitFor } from '@hopline/test-support';
import { connect } from 'nats';
import { afterAll, describe, expect, it } from 'vitest';
import { connectNatsBus, DEFAULT_JETSTREAM_POLICY } from '../src/index.js';

const cluster = await startNatsCluster({ name: 'bus-follow' });

describe.skipIf(cluster === undefined)('NATS adapter - a three-node cluster losing a node', () => {
  afterAll(async () => {
    await cluster?.[Symbol.asyncDispose]();
  });

  it.each([false, true])(
    "follow - readers whose consumers were on the killed node read on after their last message, in order, within seconds of the stream's (shared reading: %s)",
    async (sharedFollow) => {
      const { nodes, url } = cluster as NonNullable<typeof cluster>;
      const jetstream = { ...DEFAULT_JETSTREAM_POLICY, replicas: 3 };
      const writer = await connectNatsBus({ url, name: 'writer', jetstream, onError: () => {} });
      // One reader on each node: the one on the killed node reconnects elsewhere, the others
      // stay connected and hear nothing more from their consumer.
      const readers = await Promise.all(
        nodes.map((node) =>
          connectNatsBus({ url: node.url, name: `reader-${node.name}`, jetstream, onError: () => {} }),
        ),
      );
      const options = {
        name: `CLUSTER_FOLLOW_${String(sharedFollow)}`,
        subjects: [`test.cluster${String(sharedFollow)}.*.events`],
        sharedFollow,
      };
      const subject = `test.cluster${String(sharedFollow)}.q1.events`;
      const stream = await writer.durableStream(options);
      /** Publishes `value`, retrying while the cluster elects leaders. */
      const publish = (value: number) =>
        waitFor(() => stream.publish(subject, new TextEncoder().encode(String(value)), { msgId: `m-${value}` }), {
          timeoutMs: 30_000,
          intervalMs: 100,
          description: `message ${value} stored`,
        });
      const stop = new AbortController();
      const seen = readers.map((): string[] => []);
      const reading = readers.map(async (reader, index) => {
        for await (const message of (await reader.durableStream(options)).follow(subject, { signal: stop.signal }))
          seen[index]?.push(new TextDecoder().decode(message.data));
      });
      const nc = await connect({ servers: url.split(',') });
      let victim: (typeof nodes)[number] | undefined;
      try {
        for (let value = 1; value <= 5; value++) await publish(value);
        await waitFor(() => seen.every((messages) => messages.length === 5), { timeoutMs: 10_000 });
        const jsm = await nc.jetstreamManager();
        const hosts = (await jsm.consumers.list(options.name).next()).map((info) => info.cluster?.leader);
        expect(hosts).toHaveLength(3);
        victim = nodes.find((node) => node.name === hosts[0]);
        expect(victim).toBeDefined();
        await victim?.stop('SIGKILL');
        const killedAt = Date.now();

        for (let value = 6; value <= 10; value++) await publish(value);
        // nats.js's ordered consumer noticed the loss 30–45 s after it (two missed 15 s heartbeats);
        // the follow's own takes 2–3 s, plus the cluster's election (up to 9 s) to make a new one.
        await waitFor(() => seen.every((messages) => messages.length === 10), {
          timeoutMs: Math.max(0, killedAt + 20_000 - Date.now()),
          description: 'every reader to see, within 20 s of the kill, the messages stored after it',
        });
        for (const messages of seen) expect(messages).toEqual(Array.from({ length: 10 }, (_, i) => String(i + 1)));
      } finally {
        stop.abort();
        await Promise.all(reading);
        await nc.close();
        await Promise.all([writer, ...readers].map((bus) => bus.drain()));
        // The next case starts with the whole cluster again.
        if (victim !== undefined) {
          await victim.start();
          await waitFor(() => (victim as NonNullable<typeof victim>).current(), { timeoutMs: 60_000, intervalMs: 250 });
        }
      }
    },
  );
});
