// CPU per question of the embedded process, this checkout against a baseline checkout, in one run:
// the two processes are started in turn and asked the same serial questions, rounds alternating
// (A B B A …) so that the machine's load weighs on both alike. CPU is read from /proc around each
// round; the bench's clients are not counted. Each process first answers --warmup questions: V8
// keeps compiling a question's functions for its first thousand or so (its compiler threads were
// a fifth of the process's CPU after 60 questions, a seventh after 800, a twelfth after 2,000),
// and CPU per question is what a server that has been up a while spends. Not part of
// `pnpm bench` (it needs a second checkout): run it by hand after a change to the embedded path
// and keep its results.
//
//   node --conditions=@hopline/source --import tsx bench/support/embedded-cpu-ab.ts \
//     --baseline <checkout of the code before> [--label <what the baseline is>] [--rounds 6] [--questions 100] [--warmup 1000]
//
// The baseline checkout needs its dependencies installed (or this checkout's node_modules linked).
// Writes bench/results/embedded-cpu-ab.{md,json}.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '@hopline/test-support';
import { healthy, spawnNode, stopProcess, type Proc } from './processes.js';
import { ask, benchEnv, cpuMs, QUESTIONS } from './systems.js';
import { abOptions } from './ab-options.js';
import { machineDescription } from './machine.js';

const {
  label,
  roots,
  commits,
  rounds: ROUNDS,
  questionsPerRound: QUESTIONS_PER_ROUND,
  warmup: WARMUP,
} = abOptions(1000);

interface Embedded {
  proc: Proc;
  httpUrl: string;
}

async function start(root: string, dataDir: string): Promise<Embedded> {
  const [httpPort, opsPort] = [await freePort(), await freePort()];
  const proc = spawnNode(
    'embedded',
    ['--import', './packages/embedded/src/instrumentation.ts', 'packages/embedded/src/start.ts'],
    root,
    { ...benchEnv, DATA_DIR: dataDir, HTTP_PORT: String(httpPort), GRPC_PORT: '0', METRICS_PORT: String(opsPort) },
  );
  await healthy(proc, `http://127.0.0.1:${opsPort}`);
  return { proc, httpUrl: `http://127.0.0.1:${httpPort}` };
}

/** Serial questions; the CPU the process spent on them, per question, and the statuses seen. */
async function round(system: Embedded, questions: number): Promise<{ cpuMs: number; failed: number }> {
  const pid = system.proc.child.pid as number;
  const before = cpuMs(pid);
  let failed = 0;
  for (let index = 0; index < questions; index++) {
    const status = await ask(system.httpUrl, QUESTIONS[index % QUESTIONS.length] as string, 'json');
    if (status !== '200') failed += 1;
  }
  return { cpuMs: (cpuMs(pid) - before) / questions, failed };
}

const dataDir = mkdtempSync(join(tmpdir(), 'hopline-bench-cpu-ab-'));
const systems: Record<string, Embedded> = {};
try {
  for (const [name, root] of Object.entries(roots)) {
    systems[name] = await start(root, join(dataDir, name));
    await round(systems[name], WARMUP);
  }
  const perRound: Record<string, number[]> = Object.fromEntries(Object.keys(roots).map((name) => [name, []]));
  let failed = 0;
  const names = Object.keys(roots);
  for (let index = 0; index < ROUNDS; index++) {
    // A B, then B A: neither always goes first.
    for (const name of index % 2 === 0 ? names : [...names].reverse()) {
      const result = await round(systems[name] as Embedded, QUESTIONS_PER_ROUND);
      perRound[name]?.push(Number(result.cpuMs.toFixed(2)));
      failed += result.failed;
      console.log(`round ${index + 1} ${name}: ${result.cpuMs.toFixed(2)} ms CPU per question`);
    }
  }
  const mean = (xs: number[]) => xs.reduce((sum, x) => sum + x, 0) / xs.length;
  const baselineMs = mean(perRound[label] ?? []);
  const currentMs = mean(perRound.current ?? []);
  const load = loadavg()
    .map((value) => value.toFixed(1))
    .join(' / ');
  const markdown = [
    '# Embedded CPU per question: this checkout against a baseline, alternating',
    '',
    'Command: `node --conditions=@hopline/source --import tsx bench/support/embedded-cpu-ab.ts --baseline <checkout>`',
    '',
    `Machine: ${machineDescription()}; load average at the end ${load} (1/5/15 min) on a machine shared with other work. Data: the demo corpus (14 documents), the four questions of its README in turn, JSON answers, answer cache off; each process warmed with ${WARMUP} questions, then ${ROUNDS} rounds of ${QUESTIONS_PER_ROUND} serial questions each, the two processes alternating. CPU from /proc/<pid>/stat (10 ms ticks).`,
    '',
    `| process | CPU ms per question, per round | mean |`,
    '| --- | --- | ---: |',
    ...names.map(
      (name) =>
        `| ${name} at ${commits[name]} | ${(perRound[name] ?? []).join(', ')} | ${mean(perRound[name] ?? []).toFixed(2)} |`,
    ),
    '',
    `Ratio ${label} / current: **${(baselineMs / currentMs).toFixed(2)}×** less CPU per question. Questions not answered 200: ${failed}.`,
    '',
  ].join('\n');
  console.log(markdown);
  const resultsDir = fileURLToPath(new URL('../results/', import.meta.url));
  writeFileSync(`${resultsDir}embedded-cpu-ab.md`, markdown);
  writeFileSync(
    `${resultsDir}embedded-cpu-ab.json`,
    `${JSON.stringify({ baseline: label, commits, warmup: WARMUP, rounds: ROUNDS, questionsPerRound: QUESTIONS_PER_ROUND, load: loadavg(), perRound }, null, 2)}\n`,
  );
} finally {
  await Promise.all(Object.values(systems).map(({ proc }) => stopProcess(proc.child)));
  rmSync(dataDir, { recursive: true, force: true });
}
