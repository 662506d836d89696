import { randomUUID } from 'node:crypto';
import { ValidationError } from '@hopline/contracts';
import { createMetrics } from '@hopline/telemetry';
import { describe, expect, it } from 'vitest';
import { createMemoryBroker } from '../src/index.js';

const text = (value: string) => new TextEncoder().encode(value);

describe('bus metrics', () => {
  it('metrics - every request is counted and timed as client and as server, by subject template and outcome', async () => {
    const id = randomUUID().slice(0, 8);
    const callerMetrics = createMetrics('hop-reasoner', { defaultMetrics: false });
    const serverMetrics = createMetrics('retrieval-worker', { defaultMetrics: false });
    const broker = createMemoryBroker();
    const caller = broker.connect({ metrics: callerMetrics });
    const server = broker.connect({ metrics: serverMetrics });
    // A per-question subject is counted under its template, so labels stay a closed set.
    const subject = `hopline.qa.${id}.cancel`;
    try {
      await server.serve({
        name: `metrics-${id}`,
        version: '1.0.0',
        endpoints: [
          {
            name: 'echo',
            subject,
            handle: async (request) => {
              if (new TextDecoder().decode(request.data) === 'bad') throw new ValidationError('refused');
              return { data: request.data };
            },
          },
        ],
      });
      await caller.request(subject, text('ok'), { timeoutMs: 2_000 });
      await caller.request(subject, text('ok'), { timeoutMs: 2_000 });
      await expect(caller.request(subject, text('bad'), { timeoutMs: 2_000 })).rejects.toMatchObject({
        code: 'invalid_argument',
      });

      type Labels = Partial<Record<'subject' | 'role' | 'outcome', string>>;
      const count = async (metrics: typeof callerMetrics, labels: Labels) =>
        (await metrics.natsRequests.get()).values.find((value) =>
          (Object.keys(labels) as Array<keyof Labels>).every((name) => value.labels[name] === labels[name]),
        )?.value ?? 0;
      const template = 'hopline.qa.{question}.cancel';
      expect(await count(callerMetrics, { subject: template, role: 'client', outcome: 'ok' })).toBe(2);
      expect(await count(callerMetrics, { subject: template, role: 'client', outcome: 'invalid_argument' })).toBe(1);
      expect(await count(serverMetrics, { subject: template, role: 'server', outcome: 'ok' })).toBe(2);
      expect(await count(serverMetrics, { subject: template, role: 'server', outcome: 'invalid_argument' })).toBe(1);
      // The caller served nothing and the server asked nothing.
      expect(await count(callerMetrics, { role: 'server' })).toBe(0);
      expect(await count(serverMetrics, { role: 'client' })).toBe(0);
      const durations = await callerMetrics.natsRequestDuration.get();
      expect(
        durations.values.find(
          (value) =>
            value.metricName === 'hopline_nats_request_duration_seconds_count' && value.labels.outcome === 'ok',
        )?.value,
      ).toBe(2);
    } finally {
      await caller.drain();
      await server.drain();
    }
  });
});
