import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { envVariables, type EnvSchema } from '@hopline/config';
import { configSchema as gateway } from '@hopline/answer-gateway';
import { embeddedConfigSchema } from '@hopline/embedded';
import { configSchema as hopReasoner } from '@hopline/hop-reasoner';
import { configSchema as queryUnderstanding } from '@hopline/query-understanding';
import { configSchema as reranker } from '@hopline/reranker';
import { configSchema as retrievalWorker } from '@hopline/retrieval-worker';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
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

  it('readme - documents every option and variable the command line reads', () => {
    for (const name of ['HOPLINE_URL', 'HOPLINE_API_KEY', '--url', '--kb', '--max-hops', '--json'])
      expect(readme, name).toContain(`\`${name}`);
  });

  it('readme - installs pnpm with npm where corepack fails', () => {
    expect(readme).toContain('npm i -g pnpm@10');
  });

  it.each(['README.md', 'docs/architecture.md', 'docs/events.md', 'docs/measurements.md', 'docs/operations.md'])(
    'docs - %s links only to files inside the repository that exist',
    (file) => {
      const text = readFileSync(join(repoRoot, file), 'utf8');
      const targets = [...text.matchAll(/\]\(([^)\s]+)\)/g)]
        .map((match) => match[1] ?? '')
        .filter((target) => !/^(https?:|mailto:|#)/.test(target));
      for (const target of targets) {
        const path = join(dirname(join(repoRoot, file)), target.split('#')[0] ?? '');
        expect(relative(repoRoot, path).startsWith('..'), `${file} links out of the repository: ${target}`).toBe(false);
        expect(existsSync(path), `${file} links to ${target}, which does not exist`).toBe(true);
      }
    },
  );
});
