import { defineConfig } from 'vitest/config';

// Workspace packages resolve to their TypeScript sources through the `@hopline/source`
// export condition, so tests never run against a stale build.
export default defineConfig({
  resolve: { conditions: ['@hopline/source'] },
  ssr: { resolve: { conditions: ['@hopline/source'] } },
  test: {
    include: ['packages/*/test/**/*.test.ts', 'services/*/test/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    reporters: process.env.CI ? ['default', ['json', { outputFile: '.vitest-report.json' }]] : ['default'],
  },
});
