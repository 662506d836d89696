import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import type { Scenario, ScenarioResult } from './scenarios.js';

export interface ReportRow {
  scenario: Pick<Scenario, 'fault' | 'mustHold'>;
  result: ScenarioResult;
}

export interface ReportRun {
  rows: readonly ReportRow[];
  startedAt: Date;
  questions: number;
  /** The 1-minute load average when the run started: the machine is shared. */
  loadAtStart: number;
}

const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');

/** docs/reliability.md: the fault table, filled in by `pnpm test:faults`, never by hand. */
export function writeReliabilityReport(path: string, run: ReportRun): void {
  const natsVersion = execFileSync('nats-server', ['--version'], { encoding: 'utf8' }).trim();
  const cores = cpus();
  const passed = run.rows.filter((row) => row.result.holds).length;
  const lines = [
    '# Reliability under faults',
    '',
    '<!-- Written by `pnpm test:faults` (test/faults/run.ts); do not edit by hand: run it again. -->',
    '',
    `Measured ${run.startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC by \`pnpm test:faults\`: the five`,
    'services as separate processes (one query-understanding, one reranker, two retrieval workers,',
    'two hop-reasoners, two gateway replicas) over a `nats-server` the suite started, the demo',
    `corpus ingested, ${run.questions} questions per scenario over SSE (the demo questions, each`,
    'asked once so that no answer comes from the cache), offline reasoner, default budgets.',
    '',
    `Machine: ${cores.length} × ${cores[0]?.model.trim() ?? 'unknown CPU'}, ${Math.round(totalmem() / 2 ** 30)} GiB,`,
    `Node ${process.version}, ${natsVersion}; 1-minute load ${run.loadAtStart.toFixed(1)} at the start`,
    run.loadAtStart >= cores.length
      ? '(shared with other work: latencies are those of a loaded machine).'
      : '(no other work to speak of).',
    '',
    `${passed} of ${run.rows.length} hold.`,
    '',
    '| scenario | must hold | measured | holds |',
    '| --- | --- | --- | --- |',
    ...run.rows.map(
      ({ scenario, result }) =>
        `| ${cell(scenario.fault)} | ${cell(scenario.mustHold)} | ${cell(result.measured)} | ${result.holds ? 'yes' : '**no**'} |`,
    ),
    '',
    'Words: *answered* ended with `done`; a *clear error* ended with an `error` event or a',
    'problem+json refusal; *hung* had no end 45 s after the ask (the question deadline is 30 s);',
    '*cut* closed without an end; *event gaps* are streams whose ids were not 1, 2, 3, … ;',
    'latencies are from the ask to the last event, answered questions only.',
    '',
  ];
  writeFileSync(path, lines.join('\n'));
}

export const currentLoad = (): number => loadavg()[0] ?? 0;
