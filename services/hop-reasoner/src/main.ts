// hop-reasoner: config → logger/metrics → NATS (trace bucket, question streams) → service → ops server → shutdown.
import { connectNatsBus, jetStreamPolicyFrom, natsSecurityFrom } from '@hopline/bus';
import { loadConfig } from '@hopline/config';
import { openQuestionStreams } from '@hopline/questions';
import { stopAll, stopOnSignals } from '@hopline/runtime';
import { createLogger, createMetrics, startOpsServer } from '@hopline/telemetry';
import { configSchema } from './config.js';
import { startHopReasonerService } from './service.js';

const SERVICE = 'hop-reasoner';
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
  onError: (error, where) => logger.warn('bus message failed', { ...where, error }),
});
const traces = await bus.keyValue();
const questions = await openQuestionStreams(bus);
const service = await startHopReasonerService({ config, bus, questions, traces, logger, metrics });
const ops = await startOpsServer({
  port: config.METRICS_PORT,
  ...(config.METRICS_HOST ? { host: config.METRICS_HOST } : {}),
  registry: metrics.registry,
  health: () => service.health(),
  logger,
});
logger.info('listening', { metricsPort: ops.port, nats: config.NATS_URL });

stopOnSignals({ stop: () => stopAll([service, { stop: () => bus.drain() }, { stop: () => ops.close() }]) }, { logger });
