// The answer-gateway as its own process: config → logger → keys → bus (question streams, ingest,
// traces) → cache → gateway → ops server → graceful shutdown. Telemetry was booted by
// instrumentation.ts (node --import).
import { connectNatsBus, jetStreamPolicyFrom, natsSecurityFrom } from '@hopline/bus';
import { jetstream } from '@hopline/contracts';
import { loadConfig } from '@hopline/config';
import { openQuestionStreams } from '@hopline/questions';
import { stopAll, stopOnSignals } from '@hopline/runtime';
import { createLogger, createMetrics, startOpsServer } from '@hopline/telemetry';
import { ApiKeyStore } from './api-keys.js';
import { configSchema } from './config.js';
import { createAnswerCache, startAnswerGateway } from './gateway.js';

const SERVICE = 'answer-gateway';
const config = loadConfig(SERVICE, configSchema);
const logger = createLogger(SERVICE, { level: config.LOG_LEVEL });
const metrics = createMetrics(SERVICE);
// Before any connection: a gateway without keys could only refuse every request.
const keys = ApiKeyStore.fromConfig(config);

const bus = await connectNatsBus({
  url: config.NATS_URL,
  name: SERVICE,
  jetstream: jetStreamPolicyFrom(config),
  security: natsSecurityFrom(config),
  logger,
  metrics,
  onError: (error, where) => logger.warn('bus message failed', { ...where, error }),
});
const questions = await openQuestionStreams(bus);
const ingest = await bus.durableStream();
const traces = await bus.keyValue();
const kbRecords = await bus.keyValue({ bucket: jetstream.kbBucket, retention: 'keep' });
const cache = await createAnswerCache(config, logger, metrics);
const gateway = await startAnswerGateway({
  config,
  bus,
  questions,
  ingest,
  traces,
  kbRecords,
  keys,
  logger,
  metrics,
  cache,
});
const ops = await startOpsServer({
  port: config.METRICS_PORT,
  host: config.METRICS_HOST ?? config.HTTP_HOST,
  registry: metrics.registry,
  health: async () => gateway.health(),
  logger,
});
logger.info('answer-gateway listening', {
  http: `${config.HTTP_HOST}:${gateway.httpPort}`,
  grpc: `${config.GRPC_HOST}:${gateway.grpcPort}`,
  opsPort: ops.port,
  apiKeys: keys.size,
  cache: cache.kind,
});

// Running streams and requests under way get SHUTDOWN_GRACE_MS to finish; the watchdog allows a little more for the rest.
stopOnSignals(
  {
    stop: () =>
      stopAll([gateway, { stop: () => cache.close() }, { stop: () => bus.drain() }, { stop: () => ops.close() }]),
  },
  { logger, timeoutMs: config.SHUTDOWN_GRACE_MS + 5_000 },
);
