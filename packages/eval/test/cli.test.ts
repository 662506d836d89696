import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../src/index.js';
import { tinyCorpusLines, tinyDatasetLines, tinyQuestionLines } from './fixtures.js';

const run = promisify(execFile);

/** The CLI in process, as `pnpm eval` would run it; what it prints, joined. */
async function cli(...argv: string[]): Promise<string> {
  const printed: string[] = [];
  await runCli(argv, { print: (text) => printed.push(text) });
  return printed.join('\n');
}

const lastJson = (stdout: string) => JSON.parse(stdout.trim().split('\n').at(-1) as string) as Record<string, unknown>;

describe('eval CLI', () => {
  let dir: string;
  let multihop: string;
  let chrono: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'hopline-eval-'));
    multihop = join(dir, 'tiny.jsonl');
    await writeFile(multihop, tinyDatasetLines().join('\n'));
    chrono = join(dir, 'chrono');
    await mkdir(chrono);
    await writeFile(join(chrono, 'corpus.jsonl'), tinyCorpusLines().join('\n'));
    await writeFile(join(chrono, 'questions.jsonl'), tinyQuestionLines().join('\n'));
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('cli - single mode reports BM25 and single-shot recall per data set, and the fusion used or chosen', async () => {
    const report = lastJson(await cli('--data', multihop, '--k', '3', '--json'));
    expect(report).toMatchObject({
      mode: 'single',
      k: 3,
      questions: 2,
      kb: { documents: 4, chunks: 4 },
      fusion: 'relative-score',
      weights: { bm25: 1, vector: 0.1 },
      byGroup: {
        hotpotqa: { questions: 1, systems: { bm25: { chainRecall: 100 }, 'single-shot': { chainRecall: 100 } } },
      },
    });
    const chosen = lastJson(await cli('--data', multihop, '--fusion', 'rrf', '--vector-weight', '0.5', '--json'));
    expect(chosen).toMatchObject({ fusion: 'rrf', weights: { bm25: 1, vector: 0.5 } });
    expect(await cli('--data', multihop)).toMatch(/^split all: 2 of 2 questions[\s\S]*hotpotqa\s+1\s+100\.0/m);
  });

  it('cli - a split or a limit asks fewer questions over the whole corpus; --ids replays named questions', async () => {
    const [one] = tinyDatasetLines().map((line) => JSON.parse(line) as { id: string });
    const replay = lastJson(await cli('--data', multihop, '--ids', one!.id, '--json'));
    expect(replay).toMatchObject({
      questions: 1,
      kb: { documents: 4 },
      selection: { split: 'all', questions: 1, of: 2 },
    });
    const limited = lastJson(await cli('--data', multihop, '--limit', '1', '--json'));
    expect(limited).toMatchObject({ questions: 1, kb: { documents: 4 } });
    const tune = lastJson(await cli('--data', multihop, '--split', 'tune', '--json'));
    const check = lastJson(await cli('--data', multihop, '--split', 'check', '--json'));
    expect((tune.questions as number) + (check.questions as number)).toBe(2);
    expect(tune.selection).toMatchObject({ split: 'tune', tuneCheck: { hotpotqa: {}, musique: {} } });
  });

  it('cli - a corpus folder runs the loop with the same metrics, sets bare-gold questions apart and writes one line per question', async () => {
    const out = join(dir, 'out.jsonl');
    const report = lastJson(
      await cli('--data', chrono, '--mode', 'multihop', '--unanswerable', '1', '--out', out, '--json'),
    );
    expect(report).toMatchObject({ mode: 'multihop', questions: 2, unanswerable: 1, kb: { documents: 4 } });
    const byGroup = report.byGroup as Record<string, { systems: Record<string, { answers?: unknown }> }>;
    expect(Object.keys(byGroup)).toEqual(['chronoqa', 'chronoqa (bare gold)']);
    expect(Object.keys(byGroup.chronoqa!.systems)).toEqual(['bm25', 'single-shot', 'multi-hop']);
    expect(byGroup.chronoqa!.systems['multi-hop']?.answers).toMatchObject({ judgements: { questions: 1 } });
    expect(report.overall).toMatchObject({ questions: 1, abstention: { 'multi-hop': { unanswerable: 1 } } });

    const lines = (await readFile(out, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines.map((line) => line.id)).toEqual(['c1', 'c2']);
    expect(lines[0]).toMatchObject({
      question: tinyQuestionLines().map((line) => JSON.parse(line).question)[0],
      gold: { answers: ['是的'], docIds: ['d1', 'd2'] },
      systems: {
        'multi-hop': {
          route: expect.any(String),
          stopReason: expect.any(String),
          hops: expect.arrayContaining([expect.objectContaining({ hop: 1, query: expect.any(String) })]),
          finalEvidenceDocIds: expect.any(Array),
          metrics: { breakPoint: expect.any(Number), f1: expect.any(Number), retrievalCalls: expect.any(Number) },
        },
      },
      withoutGold: { removedDocId: 'd2', systems: { 'multi-hop': { abstained: expect.any(Boolean) } } },
    });
    expect(lines[1]).toMatchObject({ apart: 'bare gold' });
  });

  it('cli - --ablate prints the change of each multi-hop figure per data set with each reasoning switch off', async () => {
    const text = await cli('--data', multihop, '--mode', 'multihop', '--ablate');
    expect(text).toMatch(/ablation: multi-hop with one switch off/);
    expect(text).toMatch(/^chain@10\s+hotpotqa\s+musique\s+all$/m);
    expect(text).toMatch(/^entityGraph\s+[-+]?\d+\.\d/m);
  });

  it('cli - the corpus format by file names, and --help, are accepted', async () => {
    const report = lastJson(
      await cli('--corpus', join(chrono, 'corpus.jsonl'), '--questions', join(chrono, 'questions.jsonl'), '--json'),
    );
    expect(report).toMatchObject({ questions: 2, kb: { documents: 4 } });
    expect(await cli('--help')).toMatch(/--split all\|tune\|check/);
  });

  it('cli - refuses a bad --k, --split, --fusion, two inputs, and --unanswerable without answers, naming the problem', async () => {
    await expect(cli('--data', multihop, '--k', '0')).rejects.toThrow(/--k must be a positive integer/);
    await expect(cli('--data', multihop, '--split', 'half')).rejects.toThrow(/unknown --split "half"/);
    await expect(cli('--data', multihop, '--fusion', 'borda')).rejects.toThrow(/unknown --fusion "borda"/);
    await expect(cli('--data', multihop, '--corpus', multihop)).rejects.toThrow(/not both/);
    await expect(cli('--questions', multihop)).rejects.toThrow(/is required/);
    await expect(cli('--data', multihop, '--unanswerable', '1')).rejects.toThrow(/needs a mode that answers/);
  });

  // tsx compiles the whole import graph and jieba loads its dictionary: seconds, more on a busy machine.
  it(
    'cli - `pnpm eval` runs as its own process and prints the report as its last line with --json',
    { timeout: 90_000 },
    async () => {
      const main = join(import.meta.dirname, '../src/main.ts');
      const { stdout } = await run(
        process.execPath,
        ['--conditions=@hopline/source', '--import', 'tsx', main, '--data', multihop, '--limit', '1', '--json'],
        { cwd: join(import.meta.dirname, '..') },
      );
      expect(lastJson(stdout)).toMatchObject({ mode: 'single', questions: 1 });
    },
  );
});
