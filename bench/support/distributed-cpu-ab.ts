// CPU per question of each distributed process (five services and their nats-server, 1 worker),
// this checkout against a baseline checkout, in one run: both clusters are up at once and asked
// the same serial JSON questions (concurrency 1), rounds alternating (A B, B A, …) so that the
// machine's load weighs on both alike. CPU is read from /proc around each round and divided by
// its questions; the bench's clients are not counted. Under a loaded machine this is steadier
// than latency, and it says which process a change saved in. Each cluster first answers
// --warmup questions (V8 compiles a question's functions over its first several hundred). Not
// part of `pnpm bench` (it needs a second checkout): run it by hand after a change to the
// distributed path and keep its results.
//
//   node --conditions=@hopline/source --import tsx bench/support/distributed-cpu-ab.ts \
//     --baseline <checkout of the code before> [--label <what the baseline is>] [--rounds 6] [--questions 100] [--warmup 400] [--format json|sse]
//
// The baseline checkout needs its dependencies installed (or this checkout's node_modules linked).
// BENCH_CPU_PROF / BENCH_CPU_PROF_DIR profile the named processes of both clusters (bench/support/processes.ts).
// With --format sse the questions are SSE streams read to their end, and the results add the
// median time to a stream's first event (what a streaming client waits for).
// Writes bench/results/distributed-cpu-ab.{md,json} (with --format sse, distributed-cpu-ab-sse.*).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { abOptions } from './ab-options.js';
import { machineDescription } from './machine.js';
import { ask, cpuMs, QUESTIONS, startDistributed, type System } from './systems.js';

const {
  label,
  roots,
  commits,
  rounds: ROUNDS,
  questionsPerRound: QUESTIONS_PER_ROUND,
  warmup: WARMUP,
  format: FORMAT,
} = abOptions(400, true);
const names = Object.keys(roots);

interface Round {
  /** CPU ms per question, by process name. */
  cpuMs: Record<string, number>;
  p50Ms: number;
  /** SSE: the median time to a stream's first event. */
  firstEventP50Ms?: number;
  failed: number;
}

const mean = (xs: number[]) => xs.reduce((sum, x) => sum + x, 0) / xs.length;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

/** Serial questions; each process's CPU per question, the median latency, and the questions not answered 200. */
async function round(system: System, questions: number): Promise<Round> {
  const before = system.processes.map((proc) => cpuMs(proc.child.pid as number));
  const latencies: number[] = [];
  const firstEvents: number[] = [];
  let failed = 0;
  for (let index = 0; index < questions; index++) {
    const started = performance.now();
    const status = await ask(system.httpUrl, QUESTIONS[index % QUESTIONS.length] as string, FORMAT, () =>
      firstEvents.push(performance.now() - started),
    );
    latencies.push(performance.now() - started);
    if (status !== '200') failed += 1;
  }
  return {
    cpuMs: Object.fromEntries(
      system.processes.map((proc, index) => [
        proc.name,
        (cpuMs(proc.child.pid as number) - (before[index] as number)) / questions,
      ]),
    ),
    p50Ms: median(latencies),
    ...(firstEvents.length > 0 ? { firstEventP50Ms: median(firstEvents) } : {}),
    failed,
  };
}

const dataDir = mkdtempSync(join(tmpdir(), 'hopline-bench-distributed-cpu-ab-'));
const systems: Record<string, System> = {};
try {
  for (const [name, root] of Object.entries(roots)) {
    systems[name] = await startDistributed(join(dataDir, name), 1, root);
    await round(systems[name], WARMUP);
  }
  const rounds: Record<string, Round[]> = Object.fromEntries(names.map((name) => [name, []]));
  for (let index = 0; index < ROUNDS; index++) {
    for (const name of index % 2 === 0 ? names : [...names].reverse()) {
      const result = await round(systems[name] as System, QUESTIONS_PER_ROUND);
      rounds[name]?.push(result);
      const total = Object.values(result.cpuMs).reduce((sum, ms) => sum + ms, 0);
      console.log(
        `round ${index + 1} ${name}: ${total.toFixed(1)} ms CPU per question (${Object.entries(result.cpuMs)
          .map(([process, ms]) => `${process} ${ms.toFixed(1)}`)
          .join(', ')}), p50 ${result.p50Ms.toFixed(1)} ms`,
      );
    }
  }
  const processNames = Object.keys(rounds[names[0] as string]?.[0]?.cpuMs ?? {});
  const meanCpu = (name: string, process: string) => mean((rounds[name] ?? []).map((r) => r.cpuMs[process] ?? 0));
  const totalCpu = (name: string) => processNames.reduce((sum, process) => sum + meanCpu(name, process), 0);
  // Round i of one cluster ran next to round i of the other: their ratio meets one load.
  const pairedRatios = (process?: string) =>
    (rounds[label] ?? []).map((baseline, index) => {
      const current = rounds.current?.[index] as Round;
      const of = (round: Round) =>
        process === undefined
          ? Object.values(round.cpuMs).reduce((sum, ms) => sum + ms, 0)
          : (round.cpuMs[process] ?? 0);
      return of(baseline) / of(current);
    });
  const spread = (ratios: number[]) =>
    `${median(ratios).toFixed(2)} (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})`;
  const medianOf = (name: string, of: (round: Round) => number) => median((rounds[name] ?? []).map(of));
  const latencyRow = (title: string, of: (round: Round) => number) =>
    `| ${title} | ${names.map((name) => medianOf(name, of).toFixed(1)).join(' | ')} | ${(medianOf(label, of) / medianOf('current', of)).toFixed(2)} | |`;
  const failed = names.reduce((sum, name) => sum + (rounds[name] ?? []).reduce((s, r) => s + r.failed, 0), 0);
  const load = loadavg()
    .map((value) => value.toFixed(1))
    .join(' / ');
  const markdown = [
    '# Distributed CPU per question: this checkout against a baseline, alternating',
    '',
    `Command: \`node --conditions=@hopline/source --import tsx bench/support/distributed-cpu-ab.ts --baseline <checkout>${FORMAT === 'sse' ? ' --format sse' : ''}\``,
    '',
    `Machine: ${machineDescription()}; load average at the end ${load} (1/5/15 min) on a machine shared with other work. Data: the demo corpus (14 documents), the four questions of its README in turn, ${FORMAT === 'sse' ? 'SSE streams read to their end' : 'JSON answers'} at concurrency 1, answer cache off, one retrieval worker; each cluster warmed with ${WARMUP} questions, then ${ROUNDS} rounds of ${QUESTIONS_PER_ROUND} serial questions each, the two clusters alternating. CPU from /proc/<pid>/stat (10 ms ticks), mean of the rounds.`,
    '',
    `| process | ${names.map((name) => `${name} (${commits[name]})`).join(' | ')} | ${label} / current | the same, per round: median (min–max) |`,
    `| --- | ${names.map(() => '---:').join(' | ')} | ---: | ---: |`,
    ...processNames.map(
      (process) =>
        `| ${process} | ${names.map((name) => meanCpu(name, process).toFixed(2)).join(' | ')} | ${(meanCpu(label, process) / meanCpu('current', process)).toFixed(2)} | ${spread(pairedRatios(process))} |`,
    ),
    `| all | ${names.map((name) => totalCpu(name).toFixed(2)).join(' | ')} | ${(totalCpu(label) / totalCpu('current')).toFixed(2)} | ${spread(pairedRatios())} |`,
    latencyRow('p50 ms (median of rounds)', (r) => r.p50Ms),
    ...(FORMAT === 'sse' ? [latencyRow('first event p50 ms (median of rounds)', (r) => r.firstEventP50Ms ?? NaN)] : []),
    '',
    `Questions not answered 200: ${failed}.`,
    '',
  ].join('\n');
  console.log(markdown);
  const resultsDir = fileURLToPath(new URL('../results/', import.meta.url));
  const results = `${resultsDir}distributed-cpu-ab${FORMAT === 'sse' ? '-sse' : ''}`;
  writeFileSync(`${results}.md`, markdown);
  writeFileSync(
    `${results}.json`,
    `${JSON.stringify({ baseline: label, commits, format: FORMAT, warmup: WARMUP, rounds: ROUNDS, questionsPerRound: QUESTIONS_PER_ROUND, load: loadavg(), perRound: rounds }, null, 2)}\n`,
  );
} finally {
  await Promise.all(Object.values(systems).map((system) => system.stop()));
  rmSync(dataDir, { recursive: true, force: true });
}
