import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { envVariables, type EnvSchema } from '@hopline/config';
import { configSchema as gateway } from '@hopline/answer-gateway';
import { embeddedConfigSchema } from '@hopline/embedded';
import { configSchema as hopReasoner } from '@hopline/hop-reasoner';
import { configSchema as queryUnderstanding } from '@hopline/query-understanding';
import { configSchema as reranker } from '@hopline/reranker';
import { configSchema as retrievalWorker } from '@hopline/retrieval-worker';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const schemas: Record<string, EnvSchema> = {
  'answer-gateway': gateway,
  'hop-reasoner': hopReasoner,
  'query-understanding': queryUnderstanding,
  reranker,
  'retrieval-worker': retrievalWorker,
  embedded: embeddedConfigSchema,
};

describe('docs', () => {
  it.each(Object.entries(schemas))('readme - every variable %s reads is documented', (_service, schema) => {
    const missing = envVariables(schema).filter((variable) => !readme.includes(`\`${variable}\``));
    expect(missing).toEqual([]);
  });

  it('readme - gives the two commands and the test command CI runs', () => {
    expect(readme).toContain('pnpm install && pnpm start');
    expect(readme).toContain('pnpm test');
    expect(readFileSync(new URL('../../.ci/run', import.meta.url), 'utf8')).toMatch(/^pnpm test$/m);
  });
});
