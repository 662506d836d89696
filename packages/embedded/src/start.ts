// `pnpm start`: the embedded mode — all five services in one process, ready to answer.
import { loadConfig } from '@hopline/config';
import { stopOnSignals } from '@hopline/runtime';
import { createLogger } from '@hopline/telemetry';
import { startupBanner } from './banner.js';
import { embeddedConfigSchema } from './config.js';
import { startEmbedded } from './embedded.js';

const config = loadConfig('hopline', embeddedConfigSchema);
const logger = createLogger('hopline', { level: config.LOG_LEVEL });
const hopline = await startEmbedded(config);

console.error(startupBanner(hopline, config));

stopOnSignals(hopline, { logger });
