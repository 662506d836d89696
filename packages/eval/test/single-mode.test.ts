import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { formatReport, parseDataset, runEval, singleMode } from '../src/index.js';
import { tinyDatasetLines } from './fixtures.js';

const run = promisify(execFile);

describe('single mode', () => {
  it('eval - single mode retrieves each question against the pooled kb and scores it', async () => {
    const questions = parseDataset(tinyDatasetLines().join('\n'), 'tiny');
    const report = await runEval(questions, { mode: singleMode, k: 2 });
    expect(report).toMatchObject({ mode: 'single', k: 2, questions: 2, kb: { documents: 4, chunks: 4 } });
    expect(report.byDataset.hotpotqa).toMatchObject({ questions: 1, chainRecall: 100, supportRecall: 100 });
    expect(report.byDataset.musique?.questions).toBe(1);
    expect(report.p95Ms).toBeGreaterThanOrEqual(report.p50Ms);
    expect(formatReport(report)).toMatch(/hotpotqa\s+1\s+100\.0\s+100\.0/);
  });

  it('eval - the CLI prints one JSON object last with --json, reports the fusion used, and rejects a bad --k or --fusion', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'hopline-eval-'));
    try {
      const data = join(dir, 'tiny.jsonl');
      await writeFile(data, tinyDatasetLines().join('\n'));
      const main = join(import.meta.dirname, '../src/main.ts');
      const node = ['--conditions=@hopline/source', '--import', 'tsx', main];
      const { stdout } = await run(
        process.execPath,
        [...node, '--data', data, '--mode', 'single', '--k', '3', '--json'],
        { cwd: join(import.meta.dirname, '..') },
      );
      const last = JSON.parse(stdout.trim().split('\n').at(-1) as string) as Record<string, unknown>;
      expect(last).toMatchObject({
        mode: 'single',
        k: 3,
        questions: 2,
        fusion: 'relative-score',
        weights: { bm25: 1, vector: 0.1 },
      });
      for (const field of ['chainRecall', 'supportRecall', 'p50Ms', 'p95Ms', 'byDataset'])
        expect(last).toHaveProperty(field);
      const chosen = await run(
        process.execPath,
        [...node, '--data', data, '--fusion', 'rrf', '--vector-weight', '0.5', '--json'],
        { cwd: join(import.meta.dirname, '..') },
      );
      expect(JSON.parse(chosen.stdout.trim().split('\n').at(-1) as string)).toMatchObject({
        fusion: 'rrf',
        weights: { bm25: 1, vector: 0.5 },
      });
      await expect(
        run(process.execPath, [...node, '--data', data, '--fusion', 'borda'], { cwd: join(import.meta.dirname, '..') }),
      ).rejects.toMatchObject({
        stderr: expect.stringMatching(/unknown --fusion "borda"/),
      });
      await expect(
        run(process.execPath, [...node, '--data', data, '--k', '0'], { cwd: join(import.meta.dirname, '..') }),
      ).rejects.toMatchObject({
        stderr: expect.stringMatching(/--k must be a positive integer/),
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
