// `pnpm start`: the embedded mode — all five services in one process, ready to answer.
import { loadConfig } from '@hopline/config';
import { stopOnSignals } from '@hopline/runtime';
import { createLogger } from '@hopline/telemetry';
import { embeddedConfigSchema } from './config.js';
import { startEmbedded } from './embedded.js';

const config = loadConfig('hopline', embeddedConfigSchema);
const logger = createLogger('hopline', { level: config.LOG_LEVEL });
const hopline = await startEmbedded(config);

const demo = hopline.demoCorpus.loaded
  ? `loaded the demo corpus (${hopline.demoCorpus.documents} documents) into kb "demo"`
  : 'kb "demo" kept from the data folder';
console.error(`
Hopline is running — embedded mode: five services in one process over the ${hopline.busKind === 'memory' ? 'in-memory bus' : `NATS server at ${config.NATS_URL}`}
  HTTP     ${hopline.httpUrl}    web page at /, API at POST /v1/ask
  gRPC     ${hopline.grpcAddress}       hopline.v1.AnswerGateway/Ask
  metrics  ${hopline.metricsUrl}
  API key  ${hopline.apiKey}    (tenant "dev", kb "demo"; saved in ${hopline.apiKeyFile})
  ${demo}

Try:  pnpm ask "Which department does the owner of Project Atlas belong to?"
`);

stopOnSignals(hopline, { logger });
