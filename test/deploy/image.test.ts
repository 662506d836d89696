// The one Dockerfile and its build context, checked without building: pinned bases, Node 22
// LTS, a non-root runtime with a health check that starts each service as its start:dist
// script does, and a context that carries what the build reads and nothing built on the host.
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { baseImages, dockerIgnores, parseDockerfile, unpinnedReason } from './support/images.js';
import { listRepoFiles, loadServices, readRepoFile } from './support/repo.js';

const stages = parseDockerfile(readRepoFile('Dockerfile'));
const runtime = stages.at(-1);
const instructions = (keyword: string) =>
  runtime?.instructions.filter((instruction) => instruction.keyword === keyword) ?? [];
const allRuns = stages.flatMap((stage) =>
  stage.instructions.filter((instruction) => instruction.keyword === 'RUN').map((instruction) => instruction.argument),
);

describe('Dockerfile', () => {
  test('Dockerfile - every base image is pinned to an exact version, and the runtime is Node 22 LTS', () => {
    const images = baseImages(stages);
    expect(images.length).toBeGreaterThan(0);
    expect(images.map(unpinnedReason).filter(Boolean)).toEqual([]);
    expect(runtime?.from).toMatch(/^node:22\.\d+\.\d+-/);
  });

  test('Dockerfile - the runtime runs as an unprivileged user and declares a health check', () => {
    const user = instructions('USER').at(-1)?.argument;
    expect(user).toBeDefined();
    expect(['root', '0', '0:0']).not.toContain(user);
    expect(instructions('HEALTHCHECK').at(-1)?.argument).toContain('healthcheck.mjs');
  });

  test('Dockerfile - the runtime takes only the bundle, not the build context or the build stage', () => {
    const copies = instructions('COPY').map((instruction) => instruction.argument);
    expect(copies.length).toBeGreaterThan(0);
    for (const copy of copies) expect(copy, copy).toMatch(/--from=bundle\b/);
  });

  test('Dockerfile - installs from the frozen lockfile, builds, and keeps production dependencies only', () => {
    expect(allRuns.some((run) => /pnpm install\b.*--frozen-lockfile/.test(run))).toBe(true);
    expect(allRuns.some((run) => /pnpm build\b/.test(run))).toBe(true);
    expect(
      allRuns.some((run) =>
        /pnpm install\b.*--frozen-lockfile.*--prod\b.*--filter-prod "@hopline\/\$\{SERVICE\}\.\.\."/.test(run),
      ),
    ).toBe(true);
  });

  test('Dockerfile - starts each service the way its start:dist script does', async () => {
    const cmd = z.array(z.string()).parse(JSON.parse(instructions('CMD').at(-1)?.argument ?? 'null'));
    expect(instructions('WORKDIR').at(-1)?.argument).toBe('/app/services/${SERVICE}');
    for (const { name } of await loadServices()) {
      const manifest = z
        .object({ scripts: z.record(z.string(), z.string()) })
        .parse(JSON.parse(readRepoFile(`services/${name}/package.json`)));
      const startDist = manifest.scripts['start:dist'];
      expect(startDist, `${name} start:dist`).toBeDefined();
      // The image may add flags (source maps), but runs the same node, preloads and entry point.
      for (const token of startDist?.split(/\s+/) ?? []) expect(cmd, `${name}: ${startDist ?? ''}`).toContain(token);
    }
  });
});

describe('.dockerignore', () => {
  const ignored = dockerIgnores(readRepoFile('.dockerignore'));

  test('.dockerignore - the build context keeps every file the build reads', () => {
    const needed = [
      ...['package.json', 'pnpm-lock.yaml', 'pnpm-workspace.yaml', '.npmrc', 'tsconfig.json', 'tsconfig.base.json'],
      ...listRepoFiles('proto'),
      ...listRepoFiles('deploy/docker'),
      ...listRepoFiles('packages', (path) => /^packages\/[^/]+\/(package\.json|tsconfig\.json|src\/)/.test(path)),
      ...listRepoFiles('services', (path) => /^services\/[^/]+\/(package\.json|tsconfig\.json|src\/)/.test(path)),
      'test/package.json',
    ];
    expect(needed.filter(ignored)).toEqual([]);
  });

  test('.dockerignore - the build context leaves out installed and built output, tests and secrets', () => {
    for (const path of [
      'node_modules/.pnpm/lock.yaml',
      'packages/contracts/node_modules/zod/index.js',
      'packages/contracts/dist/index.js',
      'services/reranker/dist/main.js',
      'services/reranker/test/reranker.test.ts',
      'test/deploy/compose.test.ts',
      'deploy/compose/api-keys.dev.json',
      'deploy/kubernetes/base/kustomization.yaml',
      '.git/HEAD',
      '.env',
    ]) {
      expect(ignored(path), path).toBe(true);
    }
  });
});
