// The soak of bench/question.ts (`--soak [minutes]`): each system asked without pause at
// concurrency 8 for the given minutes (10 by default), the RSS of every process sampled from
// /proc as it goes. A process that keeps something per question grows for as long as it is
// asked; one that does not levels off after its warm-up. The slope over the soak's second half
// says which.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ask, QUESTIONS, rssMb, startDistributed, startEmbeddedProcess, type System } from './systems.js';
import { machineDescription } from './machine.js';

const CONCURRENCY = 8;
const WARMUP_QUESTIONS = 40;
/** Samples per soak; at least one every 5 s. */
const SAMPLES = 40;
/** The embedded mode's event retention during the soak: 64 MiB, reached in a few minutes. */
const EMBEDDED_EVENTS_MAX_BYTES = 64 * 1024 ** 2;

interface Sample {
  seconds: number;
  questions: number;
  rssMb: Record<string, number>;
}

interface SoakResult {
  mode: string;
  minutes: number;
  questions: number;
  statuses: Record<string, number>;
  samples: Sample[];
}

const round = (value: number, digits = 1) => Number(value.toFixed(digits));

/** Least-squares slope of RSS against time, in MB per minute. */
function slopeMbPerMinute(samples: readonly Sample[], name: string): number {
  const points = samples.map((sample) => [sample.seconds / 60, sample.rssMb[name] ?? 0] as const);
  const meanX = points.reduce((sum, [x]) => sum + x, 0) / points.length;
  const meanY = points.reduce((sum, [, y]) => sum + y, 0) / points.length;
  const covariance = points.reduce((sum, [x, y]) => sum + (x - meanX) * (y - meanY), 0);
  const variance = points.reduce((sum, [x]) => sum + (x - meanX) ** 2, 0);
  return variance === 0 ? 0 : covariance / variance;
}

async function soakSystem(mode: string, system: System, minutes: number): Promise<SoakResult> {
  const statuses: Record<string, number> = {};
  const count = (status: string) => (statuses[status] = (statuses[status] ?? 0) + 1);
  for (let question = 0; question < WARMUP_QUESTIONS; question++)
    await ask(system.httpUrl, QUESTIONS[question % QUESTIONS.length] as string, 'json');

  const sampleRss = () =>
    Object.fromEntries(system.processes.map(({ name, child }) => [name, round(rssMb(child.pid as number))]));
  const started = performance.now();
  const endsAt = started + minutes * 60_000;
  let asked = 0;
  const samples: Sample[] = [{ seconds: 0, questions: 0, rssMb: sampleRss() }];
  const sampler = setInterval(
    () => samples.push({ seconds: round((performance.now() - started) / 1000), questions: asked, rssMb: sampleRss() }),
    Math.max(5_000, (minutes * 60_000) / SAMPLES),
  );
  try {
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (performance.now() < endsAt) {
          const question = QUESTIONS[asked % QUESTIONS.length] as string;
          asked += 1;
          count(await ask(system.httpUrl, question, 'json').catch((error: unknown) => `error ${String(error)}`));
        }
      }),
    );
  } finally {
    clearInterval(sampler);
  }
  samples.push({ seconds: round((performance.now() - started) / 1000), questions: asked, rssMb: sampleRss() });
  console.log(`--- ${mode}: ${asked} questions, RSS MB at the end ${JSON.stringify(samples.at(-1)?.rssMb)}`);
  return { mode, minutes, questions: asked, statuses, samples };
}

function report(results: readonly SoakResult[], minutes: number): string {
  const lines = [
    '# Soak: RSS over time while questions keep coming',
    '',
    `Command: \`node --conditions=@hopline/source --import tsx bench/question.ts --soak ${minutes}\``,
    '',
    `Machine: ${machineDescription()}; load average at the end ${loadavg()
      .map((load) => load.toFixed(1))
      .join(
        ' / ',
      )} (1/5/15 min). Data: the demo corpus (14 documents), its four questions in turn, answer cache off, JSON answers, ${CONCURRENCY} closed-loop clients for ${minutes} min per system after ${WARMUP_QUESTIONS} questions of warm-up. The embedded process keeps its question events in memory, under EVENTS_MAX_BYTES=${EMBEDDED_EVENTS_MAX_BYTES} (the default is 1 GiB); the distributed services keep them in nats-server's files.`,
    '',
    '## Per process',
    '',
    'The slope is a least-squares fit of RSS against time over the second half of the soak (after the heaps have grown to their working size).',
    '',
    '| system | process | questions | RSS MB at start | min | max | end | slope over the 2nd half, MB/min |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const result of results) {
    const secondHalf = result.samples.filter((sample) => sample.seconds >= (result.minutes * 60) / 2);
    for (const name of Object.keys(result.samples[0]?.rssMb ?? {})) {
      const series = result.samples.map((sample) => sample.rssMb[name] ?? 0);
      lines.push(
        `| ${result.mode} | ${name} | ${result.questions} | ${series[0]} | ${Math.min(...series)} | ${Math.max(...series)} | ${series.at(-1)} | ${round(slopeMbPerMinute(secondHalf, name), 2)} |`,
      );
    }
  }
  lines.push('', '## Statuses', '');
  for (const result of results)
    lines.push(
      `- ${result.mode}: ${Object.entries(result.statuses)
        .map(([status, n]) => `${status}: ${n}`)
        .join(', ')}`,
    );
  for (const result of results) {
    const names = Object.keys(result.samples[0]?.rssMb ?? {});
    lines.push(
      '',
      `## ${result.mode}: RSS MB over time`,
      '',
      `| s | questions | ${names.join(' | ')} |`,
      `| ---: | ---: | ${names.map(() => '---:').join(' | ')} |`,
      ...result.samples.map(
        (sample) =>
          `| ${sample.seconds} | ${sample.questions} | ${names.map((name) => sample.rssMb[name]).join(' | ')} |`,
      ),
    );
  }
  return `${lines.join('\n')}\n`;
}

/** Soaks the embedded process, then the distributed mode with one worker; writes bench/results/question-soak.*. */
export async function soak(minutes: number): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'hopline-bench-soak-'));
  try {
    const results: SoakResult[] = [];
    const systems: Array<[string, () => Promise<System>]> = [
      // Question events live in this process's memory here (on nats-server's disk when
      // distributed): a bound the soak reaches shows them leave as their retention says.
      ['embedded', () => startEmbeddedProcess(dataDir, { EVENTS_MAX_BYTES: String(EMBEDDED_EVENTS_MAX_BYTES) })],
      ['distributed, 1 worker', () => startDistributed(join(dataDir, 'distributed'), 1)],
    ];
    for (const [mode, start] of systems) {
      console.log(`--- ${mode}: soak of ${minutes} min`);
      const system = await start();
      try {
        results.push(await soakSystem(mode, system, minutes));
      } finally {
        await system.stop();
      }
    }
    const markdown = report(results, minutes);
    console.log(markdown);
    const resultsDir = new URL('../results/', import.meta.url);
    writeFileSync(new URL('question-soak.md', resultsDir), markdown);
    writeFileSync(new URL('question-soak.json', resultsDir), `${JSON.stringify(results, null, 2)}\n`);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
