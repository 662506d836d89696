import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, nkeyAuthenticator, type NatsConnection } from 'nats';
import { afterAll, describe, expect, it } from 'vitest';
import { fabricLayout, writeFabric } from '@hopline/cli';
import { connectNatsBus, natsSecurityFrom, type Bus } from '@hopline/bus';
import { subjects, type NatsClientName } from '@hopline/contracts';
import { openQuestionStreams } from '@hopline/questions';
import { startNatsServer, waitFor } from '@hopline/test-support';
import { natsTlsBlock } from './support/fabric-nats.js';

const fabric = mkdtempSync(join(tmpdir(), 'hopline-fabric-nkeys-'));
await writeFabric(fabric, { namespace: 'test' });
const file = (relative: string) => join(fabric, relative);

// The alternative to the shipped operator mode (secured-fabric.test.ts): the generated nkey users
// (auth.conf) with TLS, each service authenticated by its seed.
const nats = await startNatsServer({
  config: [...natsTlsBlock(file), readFileSync(file(fabricLayout.natsAuthConf), 'utf8')].join('\n'),
});

afterAll(async () => {
  await nats?.[Symbol.asyncDispose]();
  rmSync(fabric, { recursive: true, force: true });
});

/** A service's bus as its main.ts connects it, by NATS_NKEY and NATS_CA. */
const busOf = (service: NatsClientName): Promise<Bus> =>
  connectNatsBus({
    url: nats?.url ?? '',
    name: service,
    security: natsSecurityFrom({
      NATS_NKEY: file(fabricLayout.userNkey(service)),
      NATS_CA: file(fabricLayout.natsCa),
    }),
  });

/** A plain client holding one service's seed, as someone who stole it would. */
const clientOf = (service: NatsClientName): Promise<NatsConnection> =>
  connect({
    servers: nats?.url,
    authenticator: nkeyAuthenticator(
      new TextEncoder().encode(readFileSync(file(fabricLayout.userNkey(service)), 'utf8').trim()),
    ),
    tls: { caFile: file(fabricLayout.natsCa) },
    inboxPrefix: `_INBOX.${service}`,
  });

describe.skipIf(!nats)('fabric - nkey users: NATS_NKEY seeds from pnpm fabric:credentials', () => {
  it('fabric nkeys - a client without a seed is refused; the seeds are owner-readable only', async () => {
    await expect(connect({ servers: nats?.url, tls: { caFile: file(fabricLayout.natsCa) } })).rejects.toMatchObject({
      code: 'AUTHORIZATION_VIOLATION',
    });
    expect(statSync(file(fabricLayout.userNkey('answer-gateway'))).mode & 0o077).toBe(0);
  });

  it('fabric nkeys - the gateway enqueues a question and the hop-reasoner writes its event, each with its own seed, over JetStream', async () => {
    const [gateway, reasoner] = [await busOf('answer-gateway'), await busOf('hop-reasoner')];
    try {
      const gatewaySide = await openQuestionStreams(gateway);
      const reasonerSide = await openQuestionStreams(reasoner);
      const questionId = randomUUID();
      const deadlineUnixMs = Date.now() + 30_000;
      const scope = { tenantId: 'acme', userId: 'u', kbIds: ['kb'] };
      await gatewaySide.queue.enqueue({ ctx: { questionId, scope, deadlineUnixMs }, question: 'Who?', maxHops: 1 });
      await reasonerSide.log
        .writer(questionId, { ...scope, deadlineUnixMs }, 1)
        .append({ event: 'accepted', accepted: {} }, Date.now() + 5_000);
      expect((await gatewaySide.log.head(questionId))?.event.event).toBe('accepted');
    } finally {
      await gateway.drain();
      await reasoner.drain();
    }
  });

  it("fabric nkeys - the authorization block carries each service's permissions: the gateway cannot write question events, a worker cannot read them", async () => {
    const [gateway, worker] = [await clientOf('answer-gateway'), await clientOf('retrieval-worker')];
    try {
      const refusals: string[] = [];
      void (async () => {
        for await (const status of gateway.status()) if (status.type === 'error') refusals.push(String(status.data));
      })();
      gateway.publish(subjects.events('q1'), new Uint8Array());
      await gateway.flush();
      await waitFor(() => refusals.some((refusal) => refusal.includes('PERMISSIONS_VIOLATION')), {
        timeoutMs: 5_000,
        description: 'the refusal of a question event published with the gateway credentials',
      });
      const subscription = worker.subscribe(subjects.eventsAll);
      await worker.flush();
      await expect(
        (async () => {
          for await (const message of subscription) return message.subject;
          return 'ended';
        })(),
      ).rejects.toMatchObject({ code: 'PERMISSIONS_VIOLATION' });
    } finally {
      await gateway.close();
      await worker.close();
    }
  });
});
