import { isAbsolute, relative } from 'node:path';
import { DEFAULT_GATEWAY_URL, DEV_API_KEY_FILE } from '@hopline/cli';
import type { EmbeddedConfig } from './config.js';
import type { Embedded } from './embedded.js';

const DEMO_QUESTION = 'Which department does the owner of Project Atlas belong to?';

/** A path as the user can type it from the folder they started in. */
function shown(path: string, cwd: string): string {
  const fromCwd = relative(cwd, path);
  return fromCwd.startsWith('..') || isAbsolute(fromCwd) ? path : fromCwd;
}

/**
 * What `pnpm start` prints once everything answers. It names where the key is saved, never
 * the key: a terminal's scrollback and a shared screen are no place for a secret. Its `pnpm ask`
 * line carries whatever `pnpm ask` would not find by itself (another port, another key file).
 */
export function startupBanner(hopline: Embedded, config: EmbeddedConfig, cwd = process.cwd()): string {
  const bus = hopline.busKind === 'memory' ? 'in-memory bus' : `NATS server at ${config.NATS_URL ?? ''}`;
  const keyLine = hopline.devKey
    ? `API key  saved in ${shown(hopline.devKey.file, cwd)} (tenant "dev", kb "demo"; the web page asks for it)`
    : `API keys ${hopline.keys.count} from ${hopline.keys.source} (no dev key)`;
  const demo = hopline.demoCorpus.loaded
    ? `loaded the demo corpus (${hopline.demoCorpus.documents} documents) into kb "demo" of tenant "dev"`
    : 'kb "demo" kept from the data folder';
  const askEnv = [
    hopline.httpUrl === DEFAULT_GATEWAY_URL ? '' : `HOPLINE_URL=${hopline.httpUrl}`,
    !hopline.devKey
      ? 'HOPLINE_API_KEY=<one of your keys>'
      : shown(hopline.devKey.file, cwd) === DEV_API_KEY_FILE
        ? ''
        : `HOPLINE_API_KEY=$(cat ${shown(hopline.devKey.file, cwd)})`,
  ].filter(Boolean);
  return `
Hopline is running — embedded mode: five services in one process over the ${bus}
  HTTP     ${hopline.httpUrl}    web page at /, API at POST /v1/ask
  gRPC     ${hopline.grpcAddress}       hopline.v1.AnswerGateway/Ask
  metrics  ${hopline.metricsUrl}
  ${keyLine}
  ${demo}

Try:  ${[...askEnv, 'pnpm ask', JSON.stringify(DEMO_QUESTION)].join(' ')}
`;
}
