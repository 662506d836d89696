// retrieval-worker: config → logger/metrics → NATS → indexes → worker → ops server → shutdown.
import { connectNatsBus, jetStreamPolicyFrom, natsSecurityFrom } from '@hopline/bus';
import { loadConfig } from '@hopline/config';
import { stopAll, stopOnSignals } from '@hopline/runtime';
import { createLogger, createMetrics, startOpsServer } from '@hopline/telemetry';
import { openBackends } from './backends.js';
import { configSchema } from './config.js';
import { startRetrievalWorker } from './worker.js';

const SERVICE = 'retrieval-worker';
const config = loadConfig(SERVICE, configSchema);
const logger = createLogger(SERVICE, { level: config.LOG_LEVEL });
const metrics = createMetrics(SERVICE);

const bus = await connectNatsBus({
  url: config.NATS_URL,
  name: SERVICE,
  jetstream: jetStreamPolicyFrom(config),
  security: natsSecurityFrom(config),
  logger,
  metrics,
});
const backends = await openBackends(config, logger);
const worker = await startRetrievalWorker({ config, bus, ...backends, logger, metrics });
const ops = await startOpsServer({
  port: config.METRICS_PORT,
  ...(config.METRICS_HOST ? { host: config.METRICS_HOST } : {}),
  registry: metrics.registry,
  health: () => worker.health(),
  logger,
});
logger.info('listening', { metricsPort: ops.port, nats: config.NATS_URL });

stopOnSignals(
  {
    stop: () =>
      stopAll([
        worker,
        { stop: () => bus.drain() },
        { stop: () => ops.close() },
        { stop: () => backends.lexical.close() },
        { stop: () => backends.vector.close() },
      ]),
  },
  { logger },
);
