import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import { connect, credsAuthenticator, type NatsConnection, type NatsError } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCertificateAuthority, fabricLayout, loadDocuments, readSse, writeFabric } from '@hopline/cli';
import { jetstream, loadHoplineGrpc, natsClients, subjects, type NatsClientName } from '@hopline/contracts';
import { createClient, waitForClientReady } from '@hopline/grpc';
import { startNatsServer, waitFor, type NatsServerProcess } from '@hopline/test-support';
import * as gateway from '@hopline/answer-gateway';
import { hashApiKey } from '@hopline/answer-gateway';
import { connectNatsBus, natsSecurityFrom } from '@hopline/bus';
import { loadConfig } from '@hopline/config';
import * as hopReasoner from '@hopline/hop-reasoner';
import * as queryUnderstanding from '@hopline/query-understanding';
import { openQuestionStreams } from '@hopline/questions';
import * as retrievalWorker from '@hopline/retrieval-worker';
import { configSchema as rerankerConfig, startRerankerService } from '@hopline/reranker';
import { createLogger, createMetrics } from '@hopline/telemetry';
import { type ServiceName } from './cluster.js';
import { natsTlsBlock } from './support/fabric-nats.js';

const demoCorpus = fileURLToPath(new URL('../../packages/embedded/demo-corpus/docs', import.meta.url));
const fabric = mkdtempSync(join(tmpdir(), 'hopline-fabric-'));
await writeFabric(fabric, { namespace: 'test' });
const file = (relative: string) => join(fabric, relative);

// The generated operator, account and users (operator mode) with TLS on, as the shipped deployment
// runs NATS; fabric-nkeys.test.ts covers the nkey alternative.
const nats: NatsServerProcess | undefined = await startNatsServer({
  config: [...natsTlsBlock(file), readFileSync(file(fabricLayout.natsOperatorConf), 'utf8')].join('\n'),
});

const tlsOf = (service: ServiceName) => ({
  GRPC_TLS_CA: file(fabricLayout.serviceCa(service)),
  GRPC_TLS_CERT: file(fabricLayout.serviceCert(service)),
  GRPC_TLS_KEY: file(fabricLayout.serviceKey(service)),
});

/** Each service's own credentials and certificates, by the variables an operator sets. */
function credentialsOf(service: ServiceName): Record<string, string> {
  const tls = tlsOf(service);
  if (!(natsClients as readonly string[]).includes(service)) return tls;
  return { ...tls, NATS_CREDS: file(fabricLayout.userCreds(service)), NATS_CA: file(fabricLayout.natsCa) };
}

/** A plain NATS client holding one service's credentials, as someone who stole them would. */
async function connectAs(service: NatsClientName): Promise<NatsConnection> {
  return connect({
    servers: nats?.url,
    authenticator: credsAuthenticator(readFileSync(file(fabricLayout.userCreds(service)))),
    tls: { caFile: file(fabricLayout.natsCa) },
    inboxPrefix: `_INBOX.${service}`,
  });
}

/** The server's refusal of a subscription; fails if a message arrives instead. */
async function subscriptionRefusal(nc: NatsConnection, subject: string): Promise<NatsError> {
  const subscription = nc.subscribe(subject);
  await nc.flush();
  try {
    for await (const message of subscription) throw new Error(`received a message on ${message.subject}`);
  } catch (error) {
    return error as NatsError;
  }
  throw new Error(`the subscription to ${subject} ended without a refusal`);
}

/** The server's refusal of a publish, reported on the connection's status. */
async function publishRefusal(nc: NatsConnection, subject: string): Promise<string> {
  const refusals: string[] = [];
  void (async () => {
    for await (const status of nc.status()) if (status.type === 'error') refusals.push(String(status.data));
  })();
  nc.publish(subject, new Uint8Array());
  await nc.flush();
  return waitFor(() => refusals.find((refusal) => refusal.includes('PERMISSIONS_VIOLATION')) ?? undefined, {
    timeoutMs: 5_000,
    description: `the refusal of a publish to ${subject}`,
  });
}

interface FiveServices {
  gatewayUrl: string;
  apiKey: string;
  indexedChunks(tenantId: string, kbId: string): Promise<number>;
  stop(): Promise<void>;
}

/** The five services, each configured by its own variables: its NATS user, its certificate. */
async function startFiveServices(natsUrl: string): Promise<FiveServices> {
  const dataDir = mkdtempSync(join(tmpdir(), 'hopline-fabric-data-'));
  const metrics = createMetrics('fabric-test');
  const logger = (service: string) => createLogger(service, { level: 'warn' });
  const configOf = <S extends Parameters<typeof loadConfig>[1]>(
    service: ServiceName,
    schema: S,
    env: Record<string, string>,
  ) => loadConfig(service, schema, { NATS_URL: natsUrl, METRICS_PORT: '0', ...credentialsOf(service), ...env });
  const connectAsService = (service: ServiceName, config: Parameters<typeof natsSecurityFrom>[0]) =>
    connectNatsBus({ url: natsUrl, name: service, security: natsSecurityFrom(config) });
  const running: Array<{ stop(): Promise<void> }> = [];
  const stop = async () => {
    for (const service of running.reverse()) await service.stop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const loopback = { GRPC_HOST: '127.0.0.1', GRPC_PORT: '0' };
    const workerConfig = configOf('retrieval-worker', retrievalWorker.configSchema, {
      DATA_DIR: join(dataDir, 'retrieval'),
      WORKER_ID: 'worker-1',
    });
    const workerBus = await connectAsService('retrieval-worker', workerConfig);
    running.push({ stop: () => workerBus.drain() });
    const backends = await retrievalWorker.openBackends(workerConfig, logger('retrieval-worker'));
    const worker = await retrievalWorker.startRetrievalWorker({
      config: workerConfig,
      bus: workerBus,
      ...backends,
      logger: logger('retrieval-worker'),
      metrics,
    });
    running.push(worker);
    const rerankerService = await startRerankerService({
      config: configOf('reranker', rerankerConfig, loopback),
      logger: logger('reranker'),
      metrics,
    });
    running.push(rerankerService);
    const quService = await queryUnderstanding.startQueryUnderstandingService({
      config: configOf('query-understanding', queryUnderstanding.configSchema, loopback),
      logger: logger('query-understanding'),
      metrics,
    });
    running.push(quService);

    // Over gRPC with mutual TLS, not in-process: the hop under test.
    const reasonerConfig = configOf('hop-reasoner', hopReasoner.configSchema, {
      QUERY_UNDERSTANDING_ADDRESS: `127.0.0.1:${quService.port}`,
      RERANKER_ADDRESS: `127.0.0.1:${rerankerService.port}`,
    });
    const reasonerBus = await connectAsService('hop-reasoner', reasonerConfig);
    running.push({ stop: () => reasonerBus.drain() });
    const reasoner = await hopReasoner.startHopReasonerService({
      config: reasonerConfig,
      bus: reasonerBus,
      questions: await openQuestionStreams(reasonerBus),
      traces: await reasonerBus.keyValue(),
      logger: logger('hop-reasoner'),
      metrics,
    });
    running.push(reasoner);

    const apiKey = 'test-key-acme';
    const gatewayConfig = configOf('answer-gateway', gateway.configSchema, {
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: '0',
      ...loopback,
      API_KEYS: JSON.stringify({
        keys: [{ keyHash: hashApiKey(apiKey), tenantId: 'acme', userId: 'ci', kbIds: ['demo'], canIngest: true }],
      }),
    });
    const gatewayBus = await connectAsService('answer-gateway', gatewayConfig);
    running.push({ stop: () => gatewayBus.drain() });
    const gatewayService = await gateway.startAnswerGateway({
      config: gatewayConfig,
      bus: gatewayBus,
      questions: await openQuestionStreams(gatewayBus),
      ingest: await gatewayBus.durableStream(),
      traces: await gatewayBus.keyValue(),
      kbRecords: await gatewayBus.keyValue({ bucket: jetstream.kbBucket, retention: 'keep' }),
      keys: gateway.ApiKeyStore.fromConfig(gatewayConfig),
      logger: logger('answer-gateway'),
      metrics,
    });
    running.push(gatewayService);
    return {
      gatewayUrl: `http://127.0.0.1:${gatewayService.httpPort}`,
      apiKey,
      indexedChunks: (tenantId, kbId) => worker.indexedChunks(tenantId, kbId),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The refusals the server logged after `since` characters of its log. */
const violations = (since: number) =>
  (nats?.log() ?? '')
    .slice(since)
    .split('\n')
    .filter((line) => /Violation/.test(line));

afterAll(async () => {
  await nats?.[Symbol.asyncDispose]();
  rmSync(fabric, { recursive: true, force: true });
});

describe.skipIf(!nats)('fabric - NATS refuses each service what its role does not need', () => {
  it('fabric - a client without credentials, or without TLS, is refused', async () => {
    await expect(connect({ servers: nats?.url, tls: { caFile: file(fabricLayout.natsCa) } })).rejects.toMatchObject({
      code: 'AUTHORIZATION_VIOLATION',
    });
    const creds = credsAuthenticator(readFileSync(file(fabricLayout.userCreds('hop-reasoner'))));
    await expect(connect({ servers: nats?.url, authenticator: creds, tls: null })).rejects.toThrow();
  });

  it("fabric - a retrieval worker's credentials cannot read question events nor write them", async () => {
    const worker = await connectAs('retrieval-worker');
    try {
      await expect(subscriptionRefusal(worker, subjects.eventsAll)).resolves.toMatchObject({
        code: 'PERMISSIONS_VIOLATION',
      });
      await expect(publishRefusal(worker, subjects.events('q1'))).resolves.toMatch(/PERMISSIONS_VIOLATION/);
      // The server logs each refusal: what the test of the services' own traffic reads.
      expect(violations(0).join('\n')).toMatch(/Subscription Violation.*hopline\.qa\.\*\.events/);
    } finally {
      await worker.close();
    }
  });

  it("fabric - the gateway's credentials cannot write question events, answer retrievals, read the ingest consumers or take question jobs", async () => {
    const gateway = await connectAs('answer-gateway');
    try {
      // Only hop-reasoners write a question's log; a gateway asks them for its end.
      await expect(publishRefusal(gateway, subjects.events('q1'))).resolves.toMatch(/PERMISSIONS_VIOLATION/);
      await expect(subscriptionRefusal(gateway, subjects.retrieve)).resolves.toMatchObject({
        code: 'PERMISSIONS_VIOLATION',
      });
      await expect(
        publishRefusal(gateway, `$JS.API.CONSUMER.INFO.${jetstream.ingestStream}.${jetstream.ingestConsumer}`),
      ).resolves.toMatch(/PERMISSIONS_VIOLATION/);
      await expect(
        publishRefusal(gateway, `$JS.API.CONSUMER.MSG.NEXT.${jetstream.questionStream}.${jetstream.questionConsumer}`),
      ).resolves.toMatch(/PERMISSIONS_VIOLATION/);
      await expect(publishRefusal(gateway, subjects.retrievalPresence)).resolves.toMatch(/PERMISSIONS_VIOLATION/);
    } finally {
      await gateway.close();
    }
  });

  it("fabric - only the gateway publishes asks and ingest commands: a hop-reasoner's credentials cannot", async () => {
    const reasoner = await connectAs('hop-reasoner');
    try {
      await expect(publishRefusal(reasoner, subjects.ask('q1'))).resolves.toMatch(/PERMISSIONS_VIOLATION/);
      await expect(publishRefusal(reasoner, subjects.ingest('acme', 'demo'))).resolves.toMatch(/PERMISSIONS_VIOLATION/);
      // Nor ask for a question's end: that is the gateway's to ask.
      await expect(publishRefusal(reasoner, subjects.cancel('q1'))).resolves.toMatch(/PERMISSIONS_VIOLATION/);
      // Nor read another service's replies.
      await expect(subscriptionRefusal(reasoner, '_INBOX.answer-gateway.>')).resolves.toMatchObject({
        code: 'PERMISSIONS_VIOLATION',
      });
      // The server writes its log on its own time: the refusal must be in it before the next test
      // marks where the services' own traffic starts.
      await waitFor(() => violations(0).some((line) => line.includes('_INBOX.answer-gateway.>')), {
        timeoutMs: 10_000,
        description: "the refusal in the server's log",
      });
    } finally {
      await reasoner.close();
    }
  });

  describe('with the five services on their own credentials, in this process', () => {
    // Each service is built by the start function its main.ts uses, with its own NATS connection
    // and certificate: five processes compiling at once take minutes on a loaded machine.
    let fabricServices: FiveServices;
    // The refusals above are in the server's log; the services' own start here.
    let logFrom = 0;

    beforeAll(async () => {
      logFrom = nats?.log().length ?? 0;
      fabricServices = await startFiveServices(nats?.url as string);
    }, 120_000);

    afterAll(async () => {
      await fabricServices?.stop();
    });

    it('fabric - each service does its job with its own credentials: a question is ingested, asked and answered', async () => {
      const cluster = fabricServices;
      const documents = loadDocuments(demoCorpus);
      const ingest = await fetch(`${cluster.gatewayUrl}/v1/kbs/demo/documents`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${cluster.apiKey}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ documents }),
      });
      expect(ingest.status).toBe(202);
      await waitFor(async () => (await cluster.indexedChunks('acme', 'demo')) >= documents.length, {
        timeoutMs: 30_000,
        description: 'the demo corpus to be indexed',
      });

      const response = await fetch(`${cluster.gatewayUrl}/v1/ask`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${cluster.apiKey}`,
          'Content-Type': 'application/json',
          Accept: 'text/event-stream',
        },
        body: JSON.stringify({
          question: 'Which department does the owner of Project Atlas belong to?',
          kbIds: ['demo'],
        }),
      });
      expect(response.status).toBe(200);
      const names: string[] = [];
      let done: { answer?: string; degraded?: boolean } = {};
      for await (const event of readSse(response.body as ReadableStream<Uint8Array>)) {
        names.push(event.event);
        if (event.event === 'done') done = JSON.parse(event.data) as typeof done;
      }
      expect(names.at(-1)).toBe('done');
      expect(done.answer).toMatch(/Platform Engineering/);
      // Analyze and Rerank went over mutual TLS, not to a fallback.
      expect(done.degraded ?? false).toBe(false);

      // The kb routes read the newest ingest command of each kb; a delete looks its document up.
      const authorized = { Authorization: `Bearer ${cluster.apiKey}` };
      const kbs = await fetch(`${cluster.gatewayUrl}/v1/kbs`, { headers: authorized });
      expect(kbs.status).toBe(200);
      expect(JSON.stringify(await kbs.json())).toMatch(/"demo"/);
      const first = documents[0]?.docId ?? '';
      const removed = await fetch(`${cluster.gatewayUrl}/v1/kbs/demo/documents/${encodeURIComponent(first)}`, {
        method: 'DELETE',
        headers: authorized,
      });
      expect(removed.status).toBeLessThan(300);
      // Nothing any service did on the way was refused.
      expect(violations(logFrom)).toEqual([]);
    });
  });
});

describe('fabric - mutual TLS on the gRPC hops', () => {
  it('fabric - gRPC refuses a client without a certificate from the fabric CA', async () => {
    const reranker = await startRerankerService({
      config: loadConfig('reranker', rerankerConfig, { GRPC_HOST: '127.0.0.1', GRPC_PORT: '0', ...tlsOf('reranker') }),
      logger: createLogger('reranker', { level: 'error' }),
      metrics: createMetrics('reranker'),
    });
    const address = `127.0.0.1:${reranker.port}`;
    const Reranker = loadHoplineGrpc().hopline.v1.Reranker;
    const ready = (credentials: grpc.ChannelCredentials) => {
      const client = createClient(Reranker, address, { credentials });
      return waitForClientReady(client, Date.now() + 3_000).finally(() => client.close());
    };
    const ca = readFileSync(file(fabricLayout.caCert));
    const own = {
      key: readFileSync(file(fabricLayout.serviceKey('hop-reasoner'))),
      cert: readFileSync(file(fabricLayout.serviceCert('hop-reasoner'))),
    };
    // A certificate with the right name from another CA.
    const rogueDir = mkdtempSync(join(tmpdir(), 'hopline-rogue-'));
    try {
      const rogue = await createCertificateAuthority({ cert: join(rogueDir, 'ca.crt'), key: join(rogueDir, 'ca.key') });
      const forged = { cert: join(rogueDir, 'tls.crt'), key: join(rogueDir, 'tls.key') };
      await rogue.issue('hop-reasoner', ['localhost', '127.0.0.1'], forged);

      await expect(ready(grpc.credentials.createInsecure())).rejects.toThrow(/not ready/);
      await expect(ready(grpc.credentials.createSsl(ca))).rejects.toThrow(/not ready/);
      await expect(
        ready(grpc.credentials.createSsl(ca, readFileSync(forged.key), readFileSync(forged.cert))),
      ).rejects.toThrow(/not ready/);
      await expect(ready(grpc.credentials.createSsl(ca, own.key, own.cert))).resolves.toBeUndefined();
    } finally {
      rmSync(rogueDir, { recursive: true, force: true });
      await reranker.stop();
    }
  });
});
