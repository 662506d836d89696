// The three NATS users pnpm fabric:credentials makes beside the services', on a server run as the
// shipped Kubernetes deployment runs it (operator mode from the NATS chart's generated values,
// TLS): `embedded`, which holds what the gateway, the hop-reasoner and the retrieval worker need
// together, `operator-controls`, which may set the operators' controls and nothing else, and
// `operator-inspect`, the nats-box's, which may read the streams' state and nothing else.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { connect, credsAuthenticator, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fabricLayout, writeFabric } from '@hopline/cli';
import { inboxPrefix, jetstream, subjects } from '@hopline/contracts';
import { startEmbedded, type Embedded } from '@hopline/embedded';
import { embeddedTestConfig } from './support/embedded-config.js';
import { startNatsServer, waitFor } from '@hopline/test-support';
import { parse } from 'yaml';
import { z } from 'zod';
import { natsTlsBlock } from './support/fabric-nats.js';

const fabric = mkdtempSync(join(tmpdir(), 'hopline-fabric-users-'));
await writeFabric(fabric, { namespace: 'test' });
const file = (relative: string) => join(fabric, relative);

// The chart writes the values it merges into its nats.conf as JSON, key by key.
const chartMerge = z
  .object({ config: z.object({ merge: z.record(z.string(), z.unknown()) }) })
  .parse(parse(readFileSync(file(fabricLayout.chartValues), 'utf8'))).config.merge;
const nats = await startNatsServer({
  config: [
    ...natsTlsBlock(file),
    ...Object.entries(chartMerge).map(([key, value]) => `${key}: ${JSON.stringify(value)}`),
  ].join('\n'),
});

/** The refusals the server logged after `since` characters of its log. */
const violations = (since: number) =>
  (nats?.log() ?? '')
    .slice(since)
    .split('\n')
    .filter((line) => /Violation/.test(line));

const credentialsOf = (user: 'embedded' | 'operator-controls' | 'operator-inspect') => ({
  NATS_CREDS: file(fabricLayout.userCreds(user)),
  NATS_CA: file(fabricLayout.caCert),
});

/** Each subject's publish is among the refusals the server logged. */
function expectPublishRefused(refused: readonly string[], published: readonly string[]): void {
  for (const subject of published) {
    expect(
      refused.some((line) => line.includes('Publish Violation') && line.includes(`"${subject}"`)),
      subject,
    ).toBe(true);
  }
}

/** A connection as one of the operators' users, as their tools open it. */
const connectAs = (user: 'operator-controls' | 'operator-inspect'): Promise<NatsConnection> =>
  connect({
    servers: nats?.url,
    authenticator: credsAuthenticator(readFileSync(file(fabricLayout.userCreds(user)))),
    tls: { caFile: file(fabricLayout.caCert) },
    inboxPrefix: inboxPrefix(user),
  });

const dataDir = mkdtempSync(join(tmpdir(), 'hopline-fabric-users-data-'));
let hopline: Embedded;

beforeAll(async () => {
  if (!nats) return;
  const config = embeddedTestConfig(dataDir, { NATS_URL: nats.url, ...credentialsOf('embedded') });
  hopline = await startEmbedded(config, {});
}, 90_000);

afterAll(async () => {
  await hopline?.stop();
  await nats?.[Symbol.asyncDispose]();
  rmSync(fabric, { recursive: true, force: true });
  rmSync(dataDir, { recursive: true, force: true });
});

/** `pnpm controls …` as an operator runs it, with the operator-controls credentials. */
async function controls(...args: string[]): Promise<{ code: number; out: string }> {
  try {
    const { stdout } = await promisify(execFile)('pnpm', ['--silent', 'controls', ...args], {
      env: { ...process.env, NATS_URL: nats?.url, ...credentialsOf('operator-controls') },
    });
    return { code: 0, out: stdout.trim() };
  } catch (error) {
    const failed = error as { code: number; stderr: string };
    return { code: failed.code, out: failed.stderr.trim() };
  }
}

const metric = async (name: string): Promise<string | undefined> =>
  (await (await fetch(hopline.metricsUrl)).text()).match(new RegExp(`^${name}\\{[^}]*\\} (\\S+)$`, 'm'))?.[1];

describe.skipIf(!nats)('fabric - the embedded mode and the controls command on their own NATS users', () => {
  it('fabric users - the embedded mode, as the one user embedded, loads the demo corpus and answers from it with nothing refused', async () => {
    expect(hopline.busKind).toBe('nats');
    expect(hopline.demoCorpus).toEqual({ loaded: true, documents: 14 });
    const response = await fetch(`${hopline.httpUrl}/v1/ask`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${hopline.devKey?.key ?? ''}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        question: 'Which department does the owner of Project Atlas belong to?',
        kbIds: ['demo'],
      }),
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { answer: string; degraded?: boolean };
    expect(body.answer).toMatch(/Platform Engineering/);
    expect(body.degraded ?? false).toBe(false);
    expect(violations(0)).toEqual([]);
  }, 60_000);

  it('fabric users - pnpm controls, as operator-controls, changes the controls the embedded hop-reasoner applies', async () => {
    const logFrom = nats?.log().length ?? 0;
    expect(await controls('--multi-hop', 'off')).toEqual({ code: 0, out: 'multi-hop off, hop cap 5' });
    await waitFor(async () => (await metric('hopline_control_multi_hop')) === '0', {
      timeoutMs: 10_000,
      description: 'the hop-reasoner to apply multi-hop off',
    });
    expect(violations(logFrom)).toEqual([]);
  }, 60_000);

  it('fabric users - operator-controls cannot read question events, open a consumer on them, nor ask or cancel', async () => {
    const client = await connectAs('operator-controls');
    const logFrom = nats?.log().length ?? 0;
    try {
      const subscription = client.subscribe(subjects.eventsAll);
      await client.flush();
      await expect(
        (async () => {
          for await (const message of subscription) return message.subject;
          return 'ended';
        })(),
      ).rejects.toMatchObject({ code: 'PERMISSIONS_VIOLATION' });
      for (const subject of [
        `$JS.API.CONSUMER.CREATE.${jetstream.questionEventsStream}`,
        `$JS.API.STREAM.MSG.GET.${jetstream.questionEventsStream}`,
        subjects.ask('q1'),
        subjects.cancel('q1'),
      ]) {
        client.publish(subject, new Uint8Array());
      }
      await client.flush();
      // The server logs each refused publish; wait for the last one.
      await waitFor(() => violations(logFrom).some((line) => line.includes(subjects.cancel('q1'))), {
        timeoutMs: 10_000,
        description: "the refusals in the server's log",
      });
      const refused = violations(logFrom);
      expect(refused.join('\n')).toMatch(/Subscription Violation.*hopline\.qa\.\*\.events/);
      expectPublishRefused(refused, [
        `$JS.API.CONSUMER.CREATE.${jetstream.questionEventsStream}`,
        `$JS.API.STREAM.MSG.GET.${jetstream.questionEventsStream}`,
        subjects.ask('q1'),
      ]);
    } finally {
      await client.close();
    }
  });

  it("fabric users - operator-inspect, the nats-box's user, reads the streams' state but no message, and publishes nothing", async () => {
    const client = await connectAs('operator-inspect');
    const logFrom = nats?.log().length ?? 0;
    try {
      // What `nats stream ls`, `nats stream info` and `nats consumer ls` ask.
      const manager = await client.jetstreamManager();
      const names: string[] = [];
      for await (const name of manager.streams.names()) names.push(name);
      expect(names).toEqual(expect.arrayContaining([jetstream.deadLetterStream, jetstream.questionEventsStream]));
      const deadLetters = await manager.streams.info(jetstream.deadLetterStream);
      expect(deadLetters.state.messages).toBeGreaterThanOrEqual(0);
      expect((await manager.consumers.list(jetstream.ingestStream).next()).length).toBeGreaterThan(0);

      // A question's events and a dead letter's document stay unread; nothing can be sent.
      await expect(manager.streams.getMessage(jetstream.questionEventsStream, { seq: 1 })).rejects.toThrow();
      for (const subject of [subjects.ask('q1'), `$JS.API.STREAM.PURGE.${jetstream.deadLetterStream}`]) {
        client.publish(subject, new Uint8Array());
      }
      await client.flush();
      await waitFor(
        () => violations(logFrom).some((line) => line.includes(`$JS.API.STREAM.PURGE.${jetstream.deadLetterStream}`)),
        { timeoutMs: 10_000, description: "the refusals in the server's log" },
      );
      expectPublishRefused(violations(logFrom), [
        `$JS.API.STREAM.MSG.GET.${jetstream.questionEventsStream}`,
        subjects.ask('q1'),
        `$JS.API.STREAM.PURGE.${jetstream.deadLetterStream}`,
      ]);
    } finally {
      await client.close();
    }
  });
});
