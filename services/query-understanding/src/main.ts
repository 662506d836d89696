// query-understanding: config → logger/metrics → gRPC service → ops server → shutdown.
import { loadConfig } from '@hopline/config';
import { stopAll, stopOnSignals } from '@hopline/runtime';
import { createLogger, createMetrics, startOpsServer } from '@hopline/telemetry';
import { configSchema } from './config.js';
import { startQueryUnderstandingService } from './service.js';

const SERVICE = 'query-understanding';
const config = loadConfig(SERVICE, configSchema);
const logger = createLogger(SERVICE, { level: config.LOG_LEVEL });
const metrics = createMetrics(SERVICE);

const service = await startQueryUnderstandingService({ config, logger, metrics });
const ops = await startOpsServer({
  port: config.METRICS_PORT,
  host: config.METRICS_HOST ?? config.GRPC_HOST,
  registry: metrics.registry,
  health: () => service.health(),
  logger,
});
logger.info('listening', { grpcPort: service.port, metricsPort: ops.port });

stopOnSignals({ stop: () => stopAll([service, { stop: () => ops.close() }]) }, { logger });
