import { join } from 'node:path';
import {
  connectNatsBus,
  createFileKeyValueStore,
  createMemoryBroker,
  jetStreamPolicyFrom,
  limitsOf,
  natsSecurityFrom,
  type Bus,
  type RetentionLimits,
} from '@hopline/bus';
import { loadConfig } from '@hopline/config';
import { jetstream } from '@hopline/contracts';
import { openQuestionStreams } from '@hopline/questions';
import * as gateway from '@hopline/answer-gateway';
import * as hopReasoner from '@hopline/hop-reasoner';
import * as queryUnderstanding from '@hopline/query-understanding';
import * as reranker from '@hopline/reranker';
import * as retrievalWorker from '@hopline/retrieval-worker';
import { stopAll, type RunningService } from '@hopline/runtime';
import { createLogger, createMetrics, runInService, startOpsServer } from '@hopline/telemetry';
import type { EmbeddedConfig } from './config.js';
import { loadDemoCorpus } from './demo-corpus.js';
import { DEV_PRINCIPAL, loadOrCreateDevKey } from './dev-key.js';
import { inProcessCall } from './in-process-call.js';

export interface Embedded {
  httpUrl: string;
  grpcAddress: string;
  metricsUrl: string;
  /** Where the gateway's API keys come from, and how many there are. */
  keys: { source: 'dev key' | 'API_KEYS_FILE' | 'API_KEYS'; count: number };
  /** The key made on first start and saved in a file; none when API_KEYS_FILE or API_KEYS name the keys. */
  devKey: { key: string; file: string } | undefined;
  busKind: 'memory' | 'nats';
  demoCorpus: { loaded: boolean; documents: number };
  stop(): Promise<void>;
}

/**
 * All five services in one process, each built by the same start function its own main.ts
 * uses, each with its own bus connection: over the in-memory broker (which encodes every
 * payload as NATS would, and checks headers with nats.js, except a question's events, handed to
 * the gateway as the objects decoding them would give) or, with NATS_URL, over a real server. The services reach each
 * other as in the distributed mode (NATS subjects), except that the hop-reasoner calls
 * query-understanding and the reranker directly rather than over gRPC on loopback (both still
 * serve gRPC for other clients), and the retrieval worker directly rather than over the bus
 * (it still serves its NATS endpoints).
 */
export async function startEmbedded(config: EmbeddedConfig, env: NodeJS.ProcessEnv = process.env): Promise<Embedded> {
  const metrics = createMetrics('hopline-embedded');
  const logger = (service: string) => createLogger(service, { level: config.LOG_LEVEL });
  const jetStreamPolicy = jetStreamPolicyFrom(config);
  const broker = config.NATS_URL ? undefined : createMemoryBroker({ jetstream: jetStreamPolicy });
  // Checked before anything starts: contradictory settings or a missing file fail here.
  const security = broker ? undefined : natsSecurityFrom(config);
  const connect = async (service: string): Promise<Bus> => {
    const onError = (error: unknown, where: { operation: string; subject: string }) =>
      logger(service).warn('bus message failed', { ...where, error });
    return broker
      ? broker.connect({ onError, metrics, service })
      : connectNatsBus({
          url: config.NATS_URL as string,
          name: service,
          onError,
          metrics,
          jetstream: jetStreamPolicy,
          security,
        });
  };
  const serviceConfig = <S extends Parameters<typeof loadConfig>[1]>(
    service: string,
    schema: S,
    overrides: Record<string, string>,
  ) => loadConfig(service, schema, { ...env, ...overrides, METRICS_PORT: '0' });
  const loopback = { GRPC_HOST: '127.0.0.1', GRPC_PORT: '0' };
  const running: RunningService[] = [];
  const buses: Bus[] = [];
  const stop = () => stopAll([...running].reverse().concat(buses.map((bus) => ({ stop: () => bus.drain() }))));
  /** A file store, closed after the services that write it have stopped. */
  const fileStore = (dir: string, retention?: RetentionLimits) => {
    const store = createFileKeyValueStore(dir, retention);
    running.push({ stop: () => store.close() });
    return store;
  };

  try {
    const workerBus = await connect('retrieval-worker');
    buses.push(workerBus);
    const workerConfig = serviceConfig('retrieval-worker', retrievalWorker.configSchema, {
      DATA_DIR: join(config.DATA_DIR, 'retrieval'),
    });
    const backends = await retrievalWorker.openBackends(workerConfig, logger('retrieval-worker'));
    running.push({ stop: () => backends.lexical.close() }, { stop: () => backends.vector.close() });
    const worker = await runInService('retrieval-worker', () =>
      retrievalWorker.startRetrievalWorker({
        config: workerConfig,
        bus: workerBus,
        ...backends,
        logger: logger('retrieval-worker'),
        metrics,
      }),
    );
    running.push(worker);

    const rerankerService = await runInService('reranker', () =>
      reranker.startRerankerService({
        config: serviceConfig('reranker', reranker.configSchema, loopback),
        logger: logger('reranker'),
        metrics,
      }),
    );
    running.push(rerankerService);
    const quService = await runInService('query-understanding', () =>
      queryUnderstanding.startQueryUnderstandingService({
        config: serviceConfig('query-understanding', queryUnderstanding.configSchema, loopback),
        logger: logger('query-understanding'),
        metrics,
      }),
    );
    running.push(quService);

    const reasonerBus = await connect('hop-reasoner');
    buses.push(reasonerBus);
    // Reasoning traces: JetStream KV over NATS, a log file under DATA_DIR otherwise, so they outlive a
    // restart; either way they age out by the traces' retention limits.
    const traces = broker
      ? fileStore(join(config.DATA_DIR, 'traces'), limitsOf(jetStreamPolicy, 'traces'))
      : await reasonerBus.keyValue();
    const questionStreams = await openQuestionStreams(reasonerBus);
    const reasoner = await runInService('hop-reasoner', () =>
      hopReasoner.startHopReasonerService({
        config: serviceConfig('hop-reasoner', hopReasoner.configSchema, {
          QUERY_UNDERSTANDING_ADDRESS: `127.0.0.1:${quService.port}`,
          RERANKER_ADDRESS: `127.0.0.1:${rerankerService.port}`,
        }),
        bus: reasonerBus,
        questions: questionStreams,
        traces,
        logger: logger('hop-reasoner'),
        metrics,
        // Both share this process: called directly, not over gRPC on loopback, and traced as
        // their own services' work, as their gRPC handlers would be.
        inProcess: {
          analyzer: {
            analyze: inProcessCall(
              'query-understanding',
              'hopline.v1.QueryUnderstanding/Analyze',
              (...args) => quService.analyzer.analyze(...args),
              { turnFirst: true },
            ),
          },
          reranker: {
            rerank: inProcessCall('reranker', 'hopline.v1.Reranker/Rerank', (...args) =>
              rerankerService.rerank(...args),
            ),
          },
          // Named as the worker's NATS endpoint span is.
          retriever: {
            retrieve: inProcessCall('retrieval-worker', 'hopline.retrieve process', (...args) =>
              worker.retrieve(...args),
            ),
          },
        },
      }),
    );
    running.push(reasoner);

    const gatewayBus = await connect('answer-gateway');
    buses.push(gatewayBus);
    const ingest = await gatewayBus.durableStream();
    const gatewayConfig = serviceConfig('answer-gateway', gateway.configSchema, {
      HTTP_HOST: config.HTTP_HOST,
      HTTP_PORT: String(config.HTTP_PORT),
      GRPC_HOST: config.GRPC_HOST,
      GRPC_PORT: String(config.GRPC_PORT),
    });
    // Keys named as for the gateway serve several tenants; without them, one dev key.
    const keySource = gatewayConfig.API_KEYS_FILE ? 'API_KEYS_FILE' : gatewayConfig.API_KEYS ? 'API_KEYS' : 'dev key';
    const apiKeyFile = join(config.DATA_DIR, 'dev-api-key');
    const devKey = keySource === 'dev key' ? loadOrCreateDevKey(apiKeyFile) : undefined;
    const keys = devKey?.store ?? gateway.ApiKeyStore.fromConfig(gatewayConfig);
    const gatewayQuestions = await openQuestionStreams(gatewayBus);
    // Under DATA_DIR without NATS, as the traces: created kbs outlive a restart.
    const kbRecords = broker
      ? fileStore(join(config.DATA_DIR, 'kbs'))
      : await gatewayBus.keyValue({ bucket: jetstream.kbBucket, retention: 'keep' });
    const gatewayService = await runInService('answer-gateway', () =>
      gateway.startAnswerGateway({
        config: gatewayConfig,
        bus: gatewayBus,
        questions: gatewayQuestions,
        ingest,
        traces,
        kbRecords,
        keys,
        logger: logger('answer-gateway'),
        metrics,
      }),
    );
    running.push(gatewayService);

    const demoCorpus = config.LOAD_DEMO_CORPUS
      ? await loadDemoCorpus({
          ingest,
          // Indexed once both sides of the index hold it: the older of their versions.
          indexedVersion: async (document) => {
            const [lexical, vector] = await Promise.all([
              backends.lexical.documentState(document),
              backends.vector.documentState(document),
            ]);
            return lexical && vector ? Math.min(lexical.version, vector.version) : undefined;
          },
          tenantId: DEV_PRINCIPAL.tenantId,
          kbId: 'demo',
        })
      : { loaded: false, documents: 0 };

    const opsHost = config.METRICS_HOST ?? config.HTTP_HOST;
    const ops = await startOpsServer({
      port: config.METRICS_PORT,
      host: opsHost,
      registry: metrics.registry,
      health: async () => {
        const reports = {
          gateway: gatewayService.health(),
          retrievalWorker: await worker.health(),
          hopReasoner: await reasoner.health(),
        };
        return { ok: Object.values(reports).every((report) => report.ok), details: reports };
      },
    });
    running.push({ stop: () => ops.close() });

    // An address bound on every interface is reached on loopback.
    const reachable = (host: string) => (host === '0.0.0.0' ? '127.0.0.1' : host);
    return {
      httpUrl: `http://${reachable(config.HTTP_HOST)}:${gatewayService.httpPort}`,
      grpcAddress: `${reachable(config.GRPC_HOST)}:${gatewayService.grpcPort}`,
      metricsUrl: `http://${reachable(opsHost)}:${ops.port}/metrics`,
      keys: { source: keySource, count: keys.size },
      devKey: devKey && { key: devKey.key, file: apiKeyFile },
      busKind: broker ? 'memory' : 'nats',
      demoCorpus,
      stop,
    };
  } catch (error) {
    await stop().catch(() => undefined);
    throw error;
  }
}
