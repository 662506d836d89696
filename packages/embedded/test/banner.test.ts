import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startupBanner } from '../src/banner.js';
import { embeddedConfigSchema } from '../src/config.js';
import type { Embedded } from '../src/embedded.js';

const key = 'hl_nAy-P9DUkvKoJrV1_tkj1u6DIZspY-R-';
const cwd = '/home/ana/hopline';
const config = embeddedConfigSchema.parse({});

function running(overrides: Partial<Embedded> = {}): Embedded {
  return {
    httpUrl: 'http://127.0.0.1:8080',
    grpcAddress: '127.0.0.1:50051',
    metricsUrl: 'http://127.0.0.1:43149/metrics',
    keys: { source: 'dev key', count: 1 },
    devKey: { key, file: join(cwd, '.data', 'dev-api-key') },
    busKind: 'memory',
    demoCorpus: { loaded: true, documents: 14 },
    stop: () => Promise.resolve(),
    ...overrides,
  };
}

describe('embedded startup banner', () => {
  it('banner - names the file the dev key is saved in, never the key', () => {
    const banner = startupBanner(running(), config, cwd);
    expect(banner).not.toContain(key);
    expect(banner).toContain('API key  saved in .data/dev-api-key');
    expect(banner).toContain('Try:  pnpm ask "Which department does the owner of Project Atlas belong to?"');
  });

  it('banner - the pnpm ask line carries the port and key file that pnpm ask would not find by itself', () => {
    const banner = startupBanner(
      running({ httpUrl: 'http://127.0.0.1:9090', devKey: { key, file: '/var/lib/hopline/dev-api-key' } }),
      config,
      cwd,
    );
    expect(banner).not.toContain(key);
    expect(banner).toContain(
      'Try:  HOPLINE_URL=http://127.0.0.1:9090 HOPLINE_API_KEY=$(cat /var/lib/hopline/dev-api-key) pnpm ask',
    );
  });

  it('banner - keys from API_KEYS_FILE are counted, and pnpm ask is told to bring one', () => {
    const banner = startupBanner(
      running({ keys: { source: 'API_KEYS_FILE', count: 3 }, devKey: undefined }),
      config,
      cwd,
    );
    expect(banner).toContain('API keys 3 from API_KEYS_FILE');
    expect(banner).toContain('HOPLINE_API_KEY=<one of your keys> pnpm ask');
  });
});
