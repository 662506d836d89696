// A question end to end (issue 14): what Hopline exists for, measured from outside as a client
// sees it, in the same run as the fabric floor it is judged against.
//   embedded       `pnpm start`'s process: the five services in one process over the memory bus
//   distributed    the five services as five processes over a nats-server this bench starts on a
//                  free port, with 1 and with 2 retrieval workers
// Each over the demo corpus (14 documents, 2-hop questions), with the answer cache off
// (CACHE_MAX_ENTRIES=0) so that every question runs, and rate limits out of the way. Closed-loop
// clients on loopback ask at concurrency 1, 8 and 32, for a JSON answer and for an SSE stream
// read to its end. Per run: questions per second, p50/p95/p99 of the time to the whole answer
// (for a stream, also the p50 of the time to its first event, what a streaming client waits for),
// the HTTP statuses, and the CPU each process spent per question (from /proc/<pid>/stat, so
// the services need no help to be measured) and, in the distributed mode, the NATS messages
// each service sent per question (the server's /connz, by connection name). Per mode: the gRPC
// calls a question makes (the hop-reasoner's client counters). The floor: the same calls, in
// the same order (the first retrieval beside the analysis, as the hop-reasoner sends it), made
// with raw nats.js and grpc-js against a child process that answers each at once with a 20 KB
// reply: what the fabric alone costs a question on this machine. Its NATS requests are the
// retrieval replies per question at concurrency 1 (no hedges fire there), on average.
// All systems are up at once and take turns, round by round (A B, B A, …), with the floor among
// them at concurrency 1: on a shared machine, runs minutes apart measured the load more than the
// code (the same code's ratio came out 2.52 and 1.10).
//
//   node --conditions=@hopline/source --import tsx bench/question.ts [--quick | --soak [minutes]]
//
// --soak runs bench/support/soak.ts instead: RSS over a soak at concurrency 8 (10 min per system
// by default), written to bench/results/question-soak.*; `pnpm bench` does not run it.
// --embedded-only measures the embedded mode alone (no NATS, no floor, no ratios) and writes
// bench/results/question-embedded.*: its CPU per question after a change to the embedded path,
// without a full run's half hour; question.* keeps the last full run.
// --quick (or BENCH_QUICK=1) asks fewer questions per run and keeps no results, for CI. A run asks at least three
// questions per client, so that concurrency 32 is reached and held.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import { codecs, loadHoplineGrpc, type RerankResponse } from '@hopline/contracts';
import { connect } from 'nats';
import { sampleChunks, sampleContext, sampleQuestion } from './support/payload.js';
import { soak } from './support/soak.js';
import {
  ask,
  cpuMs,
  QUESTIONS,
  rssMb,
  startDistributed,
  startEmbeddedProcess,
  startNatsServer,
  type Format,
  type System,
} from './support/systems.js';
import { stopProcess } from './support/processes.js';
import { machineDescription } from './support/machine.js';

const QUICK = process.argv.includes('--quick') || process.env.BENCH_QUICK === '1';
const EMBEDDED_ONLY = process.argv.includes('--embedded-only');
// A run's questions are asked in rounds, the systems (and at concurrency 1 the floor) taking
// turns: see `interleaved`.
const ROUNDS = QUICK ? 2 : 6;
const QUESTIONS_PER_RUN = QUICK ? 24 : 240;
// Five processes' JIT: before the first measured run every system has answered this many.
const WARMUP_QUESTIONS = QUICK ? 16 : 800;
const WARMUP_ROUNDS = QUICK ? 2 : 8;
/** Asked of the 1-worker distributed mode at concurrency 1 to learn the floor's call pattern. */
const CALIBRATION_QUESTIONS = QUICK ? 8 : 40;
const FLOOR_QUESTIONS = QUICK ? 30 : 240;
const FLOOR_WARMUP_QUESTIONS = QUICK ? 8 : 40;
const CONCURRENCIES = [1, 8, 32] as const;
const FORMATS: readonly Format[] = ['json', 'sse'];

type ModeName = 'embedded' | 'distributed, 1 worker' | 'distributed, 2 workers';
interface RunResult {
  concurrency: number;
  format: Format;
  questions: number;
  seconds: number;
  qps: number;
  /** Each round's, in the order asked: a round of one system ran beside the same round of the others. */
  roundQps: number[];
  p50: number;
  p95: number;
  p99: number;
  /** A stream's: the median time to its first event. */
  firstEventP50?: number;
  statuses: Record<string, number>;
  cpuMsPerQuestion: Record<string, number>;
  /** By the connection's name (the service); the total under "all". */
  natsMessagesPerQuestion?: Record<string, number>;
}

interface ModeResult {
  mode: ModeName;
  runs: RunResult[];
  grpcCallsPerQuestion: Record<string, number>;
  rssMb: Record<string, { start: number; end: number }>;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

const round = (value: number, digits = 2) => Number(value.toFixed(digits));

async function natsMessages(monitorUrl: string | undefined): Promise<Record<string, number>> {
  if (!monitorUrl) return {};
  const connz = (await (await fetch(`${monitorUrl}/connz?limit=4096`)).json()) as {
    connections: Array<{ name?: string; in_msgs: number }>;
  };
  const sent: Record<string, number> = {};
  for (const connection of connz.connections) {
    const name = connection.name ?? 'unnamed';
    sent[name] = (sent[name] ?? 0) + connection.in_msgs;
    sent.all = (sent.all ?? 0) + connection.in_msgs;
  }
  return sent;
}

/** Sums a Prometheus counter's samples by one label, for the samples whose role is "client". */
async function clientCalls(metricsUrl: string, metric: string, label: string): Promise<Record<string, number>> {
  const text = await (await fetch(metricsUrl)).text();
  const totals: Record<string, number> = {};
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${metric}{`) || !line.includes('role="client"')) continue;
    const key = new RegExp(`${label}="([^"]*)"`).exec(line)?.[1] ?? '?';
    totals[key] = (totals[key] ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return totals;
}

/** What one round of questions measured of a system, before the rounds of a run are summed. */
interface Round {
  questions: number;
  seconds: number;
  latencies: number[];
  /** A stream's time to its first event, per question. */
  firstEvents: number[];
  statuses: Record<string, number>;
  cpuMs: Record<string, number>;
  natsMessages: Record<string, number>;
}

async function askRound(system: System, concurrency: number, format: Format, questions: number): Promise<Round> {
  const cpuBefore = system.processes.map(({ child }) => cpuMs(child.pid as number));
  const natsBefore = await natsMessages(system.natsMonitorUrl);
  const latencies: number[] = [];
  const firstEvents: number[] = [];
  const statuses: Record<string, number> = {};
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < questions) {
        const question = QUESTIONS[next % QUESTIONS.length] as string;
        next += 1;
        const at = performance.now();
        const status = await ask(system.httpUrl, question, format, () =>
          firstEvents.push(performance.now() - at),
        ).catch((error: unknown) => `error ${String(error)}`);
        latencies.push(performance.now() - at);
        statuses[status] = (statuses[status] ?? 0) + 1;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const natsAfter = await natsMessages(system.natsMonitorUrl);
  return {
    questions,
    seconds,
    latencies,
    firstEvents,
    statuses,
    cpuMs: Object.fromEntries(
      system.processes.map(({ name, child }, index) => [
        name,
        cpuMs(child.pid as number) - (cpuBefore[index] as number),
      ]),
    ),
    natsMessages: Object.fromEntries(
      Object.entries(natsAfter).map(([name, sent]) => [name, sent - (natsBefore[name] ?? 0)]),
    ),
  };
}

const addInto = (total: Record<string, number>, part: Record<string, number>) => {
  for (const [key, value] of Object.entries(part)) total[key] = (total[key] ?? 0) + value;
};

/** A run's figures from its rounds, as if its questions had been asked in one go. */
function summed(system: System, concurrency: number, format: Format, rounds: Round[]): RunResult {
  const questions = rounds.reduce((sum, r) => sum + r.questions, 0);
  const seconds = rounds.reduce((sum, r) => sum + r.seconds, 0);
  const latencies = rounds.flatMap((r) => r.latencies);
  const firstEvents = rounds.flatMap((r) => r.firstEvents);
  const statuses: Record<string, number> = {};
  const cpu: Record<string, number> = {};
  const nats: Record<string, number> = {};
  for (const r of rounds) {
    addInto(statuses, r.statuses);
    addInto(cpu, r.cpuMs);
    addInto(nats, r.natsMessages);
  }
  const perQuestion = (totals: Record<string, number>, digits: number) =>
    Object.fromEntries(Object.entries(totals).map(([name, total]) => [name, round(total / questions, digits)]));
  return {
    concurrency,
    format,
    questions,
    seconds: round(seconds),
    qps: round(questions / seconds, 1),
    roundQps: rounds.map((r) => round(r.questions / r.seconds, 1)),
    p50: round(percentile(latencies, 50)),
    p95: round(percentile(latencies, 95)),
    p99: round(percentile(latencies, 99)),
    ...(firstEvents.length > 0 ? { firstEventP50: round(percentile(firstEvents, 50)) } : {}),
    statuses,
    cpuMsPerQuestion: perQuestion(cpu, 2),
    ...(system.natsMonitorUrl ? { natsMessagesPerQuestion: perQuestion(nats, 1) } : {}),
  };
}

/**
 * The systems in turn, one round each, the order reversed every other round (A B, B A, A B, …):
 * every system meets the machine's load of the same minutes, so that a ratio between two of them
 * measures the systems rather than what else the shared machine did meanwhile. `extra` (the floor)
 * takes its turn among them.
 */
async function interleaved(
  systems: System[],
  rounds: number,
  each: (system: System) => Promise<Round>,
  extra?: () => Promise<void>,
): Promise<Round[][]> {
  const measured: Round[][] = systems.map(() => []);
  const turns: Array<() => Promise<void>> = [
    ...systems.map((system, index) => async () => {
      measured[index]?.push(await each(system));
    }),
    ...(extra ? [extra] : []),
  ];
  for (let r = 0; r < rounds; r++) {
    for (const turn of r % 2 === 0 ? turns : [...turns].reverse()) await turn();
  }
  return measured;
}

// The floor: a child process answers every call at once with the 20 KB payload of bench/bus.ts
// and bench/grpc.ts; the bench makes a question's calls one after another, as the hop-reasoner does,
// but for the first retrieval, which the hop-reasoner sends beside the analysis
// (EARLY_FIRST_RETRIEVAL, set in benchEnv) and the floor sends beside its first gRPC call.
const FLOOR_SUBJECT = 'bench.question.floor';
const { Reranker } = loadHoplineGrpc().hopline.v1;

async function floorServer(natsUrl: string): Promise<void> {
  const connection = await connect({ servers: natsUrl, noAsyncTraces: true });
  const reply = codecs.retrieveResponse.encode({ chunks: sampleChunks(), degraded: false, workerId: 'bench-floor' });
  connection.subscribe(FLOOR_SUBJECT, { callback: (_error, message) => message.respond(reply) });
  await connection.flush();
  const rerankReply: RerankResponse = { chunks: sampleChunks(true), fallback: false, scorer: 'bench' };
  const server = new grpc.Server();
  server.addService(Reranker.service, {
    Rerank: (_call: unknown, callback: grpc.sendUnaryData<RerankResponse>) => callback(null, rerankReply),
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  console.log(port);
  createInterface({ input: process.stdin }).on('close', () => {
    server.forceShutdown();
    void connection.close().then(() => process.exit(0));
  });
}

/** The floor's caller, started once and then asked for rounds among the systems' rounds. */
interface FloorCaller {
  /** Times `questions` questions' calls, one question after another. */
  round(questions: number): Promise<number[]>;
  stop(): Promise<void>;
}

/**
 * The calls the `index`th question of a sequence makes where questions make `mean` calls on
 * average: whole calls that add up to the mean over any run of questions, not the mean rounded
 * (a pattern of 2.5 requests is not 3, nor 2).
 */
const callsOf = (index: number, mean: number) => Math.floor((index + 1) * mean) - Math.floor(index * mean);

async function startFloor({ grpcCalls, natsRequests }: FloorPattern): Promise<FloorCaller> {
  const dataDir = mkdtempSync(join(tmpdir(), 'hopline-bench-floor-'));
  const nats = await startNatsServer(dataDir);
  const server = spawn(
    process.execPath,
    ['--conditions=@hopline/source', '--import', 'tsx', fileURLToPath(import.meta.url), '--floor-server', nats.url],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const stop = async () => {
    server.stdin?.end();
    if (server.exitCode === null) await new Promise((resolve) => server.once('exit', resolve));
    await stopProcess(nats.proc.child);
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const port = await new Promise<number>((resolve, reject) => {
      createInterface({ input: server.stdout as NodeJS.ReadableStream }).once('line', (line) => resolve(Number(line)));
      server.once('exit', (code) => reject(new Error(`the floor server exited with ${String(code)}`)));
    });
    const connection = await connect({ servers: nats.url, noAsyncTraces: true });
    const client = new Reranker(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    const request = codecs.retrieveRequest.encode({ ctx: sampleContext(600_000), query: sampleQuestion, topK: 10 });
    const rerank = { ctx: sampleContext(600_000), query: sampleQuestion, topN: 10, chunks: sampleChunks() };
    const callGrpc = () =>
      new Promise<void>((resolve, reject) =>
        client.Rerank(rerank, { deadline: Date.now() + 5_000 }, (error: grpc.ServiceError | null) =>
          error ? reject(error) : resolve(),
        ),
      );
    const callNats = () => connection.request(FLOOR_SUBJECT, request, { timeout: 5_000 });
    let asked = 0;
    const round = async (questions: number) => {
      const times: number[] = [];
      for (let question = 0; question < questions; question++, asked++) {
        const nats = callsOf(asked, natsRequests);
        const grpcs = callsOf(asked, grpcCalls);
        const at = performance.now();
        // The analysis (a gRPC call) with the early retrieval beside it; then, as a hop does, a
        // retrieval and a rerank of what it found, in turn.
        await Promise.all([grpcs > 0 ? callGrpc() : undefined, nats > 0 ? callNats() : undefined]);
        for (let call = 1; call < Math.max(grpcs, nats); call++) {
          if (call < nats) await callNats();
          if (call < grpcs) await callGrpc();
        }
        times.push(performance.now() - at);
      }
      return times;
    };
    await round(FLOOR_WARMUP_QUESTIONS);
    return {
      round,
      async stop() {
        client.close();
        await connection.close();
        await stop();
      },
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The calls a question makes, on average over the calibration's questions. */
interface FloorPattern {
  grpcCalls: number;
  natsRequests: number;
}

interface Floor extends FloorPattern {
  p50: number;
  p95: number;
}

const statusText = (statuses: Record<string, number>) =>
  Object.entries(statuses)
    .map(([status, count]) => `${status}: ${count}`)
    .join(', ');
const cpuText = (cpu: Record<string, number>) =>
  Object.entries(cpu)
    .map(([name, ms]) => `${name} ${ms}`)
    .join(', ');

const LOAD_AT_START = loadavg()[0] ?? NaN;

/** The commit measured, and whether the tree had changes beside it. */
function codeMeasured(): string {
  const git = (...args: string[]) => execFileSync('git', args, { encoding: 'utf8' }).trim();
  return `${git('rev-parse', '--short', 'HEAD')}${git('status', '--porcelain', '--untracked-files=no') ? ' with uncommitted changes' : ''}`;
}

function machineLine(): string {
  return `Code: ${codeMeasured()}. Machine: ${machineDescription()}; load average ${LOAD_AT_START.toFixed(1)} at the start, at the end ${loadavg()
    .map((load) => load.toFixed(1))
    .join(
      ' / ',
    )} (1/5/15 min) on a machine shared with other work. Data: the demo corpus (14 documents), the four questions of its README in turn, answer cache off, ${QUESTIONS_PER_RUN} questions per run after ${WARMUP_QUESTIONS} of warm-up per mode (at concurrency 8); every system up at once, a run's questions asked in ${ROUNDS} rounds that alternate between the systems (A B, B A, …; the floor takes its turns among those of concurrency 1, JSON), so that the systems compared meet the same load; closed-loop clients on loopback in the bench's own process.`;
}

function runsSection(modes: ModeResult[]): string[] {
  return [
    '## Runs',
    '',
    '| mode | concurrency | format | q/s | p50 ms | p95 ms | p99 ms | first event p50 ms | statuses | CPU ms per question | NATS messages per question |',
    '| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | --- | --- | ---: |',
    ...modes.flatMap((mode) =>
      mode.runs.map(
        (r) =>
          `| ${mode.mode} | ${r.concurrency} | ${r.format} | ${r.qps} | ${r.p50} | ${r.p95} | ${r.p99} | ${r.firstEventP50 ?? '—'} | ${statusText(r.statuses)} | ${cpuText(r.cpuMsPerQuestion)} | ${r.natsMessagesPerQuestion ? cpuText(r.natsMessagesPerQuestion) : '—'} |`,
      ),
    ),
    '',
  ];
}

/** `--embedded-only`: the embedded mode's runs, its calls and memory. */
function embeddedReport(mode: ModeResult): string {
  return [
    '# A question end to end: the embedded mode alone',
    '',
    'Command: `node --conditions=@hopline/source --import tsx bench/question.ts --embedded-only`',
    '',
    machineLine(),
    '',
    ...runsSection([mode]),
    `RSS MB at start → end of the runs: ${Object.entries(mode.rssMb)
      .map(([name, rss]) => `${name} ${rss.start} → ${rss.end}`)
      .join(', ')}.`,
    '',
    'CPU is read from /proc/<pid>/stat (10 ms ticks) around each run and divided by its questions; the bench process (the clients) is not counted. The distributed modes, the floor and the ratios are in question.md, from the last full run.',
    '',
  ].join('\n');
}

function report(modes: ModeResult[], floor: Floor): string {
  const runOf = (mode: ModeName, concurrency: number, format: Format) =>
    modes
      .find((result) => result.mode === mode)
      ?.runs.find((r) => r.concurrency === concurrency && r.format === format);
  const embedded1 = runOf('embedded', 1, 'json');
  const distributed1 = runOf('distributed, 1 worker', 1, 'json');
  const embedded8 = runOf('embedded', 8, 'json');
  const distributed8 = runOf('distributed, 1 worker', 8, 'json');
  const latencyBudget = (embedded1?.p50 ?? NaN) + 1.3 * floor.p50;
  const throughputRatio = (distributed8?.qps ?? NaN) / (embedded8?.qps ?? NaN);
  // A burst of other work on the machine lands in a round or two: the median of the rounds'
  // ratios, each between rounds asked next to each other, shows whether the pooled one is skewed.
  const roundRatios = (distributed8?.roundQps ?? []).map((qps, index) => qps / (embedded8?.roundQps[index] ?? NaN));
  const command = 'node --conditions=@hopline/source --import tsx bench/question.ts';
  const lines = [
    '# A question end to end: embedded and distributed against the fabric floor',
    '',
    `Command: \`${command}${QUICK ? ' --quick' : ''}\``,
    '',
    machineLine(),
    '',
    '## Ratios (targets of issue 14)',
    '',
    '| ratio | value | target |',
    '| --- | ---: | --- |',
    `| distributed p50 at concurrency 1 (JSON) / (embedded p50 + 1.3 × floor p50) | ${round(
      (distributed1?.p50 ?? NaN) / latencyBudget,
    )} | ≤ 1 |`,
    `| distributed q/s / embedded q/s at concurrency 8 (JSON) | ${round(throughputRatio)} | ≥ 0.85 |`,
    `| the same, median of the ${roundRatios.length} rounds' ratios (min–max) | ${round(percentile(roundRatios, 50))} (${round(Math.min(...roundRatios))}–${round(Math.max(...roundRatios))}) | context |`,
    `| floor p50 / embedded p50 at concurrency 1 (JSON) | ${round(floor.p50 / (embedded1?.p50 ?? NaN))} | context |`,
    '',
    `The floor: ${floor.natsRequests} NATS requests and ${floor.grpcCalls} gRPC calls per question on average (what a question made in the distributed mode with 1 worker at concurrency 1; each question makes whole calls, which add up to these means), made with raw nats.js and grpc-js against a process that answers each at once with a 20 KB reply, in turn but for the first request, which goes beside the first call as the hop-reasoner's early search goes beside the analysis: p50 ${floor.p50} ms, p95 ${floor.p95} ms over ${FLOOR_QUESTIONS} questions.`,
    '',
    ...runsSection(modes),
    '## Calls per question and memory',
    '',
    '| mode | hop-reasoner gRPC calls | RSS MB at start → end of the runs |',
    '| --- | --- | --- |',
    ...modes.map(
      (mode) =>
        `| ${mode.mode} | ${cpuText(mode.grpcCallsPerQuestion)} | ${Object.entries(mode.rssMb)
          .map(([name, rss]) => `${name} ${rss.start} → ${rss.end}`)
          .join(', ')} |`,
    ),
    '',
    'CPU is read from /proc/<pid>/stat (10 ms ticks) around each run and divided by its questions; the bench process (the clients) is not counted. "sse-error" counts streams that ended in an error event.',
    '',
  ];
  return lines.join('\n');
}

/** The systems up at once, under the names the results give them. */
async function startSystems(dataDir: string): Promise<Array<{ mode: ModeName; system: System }>> {
  const starts: Array<[ModeName, () => Promise<System>]> = [
    ['embedded', () => startEmbeddedProcess(dataDir)],
    ...(EMBEDDED_ONLY
      ? []
      : ([
          ['distributed, 1 worker', () => startDistributed(join(dataDir, 'one'), 1)],
          ['distributed, 2 workers', () => startDistributed(join(dataDir, 'two'), 2)],
        ] as Array<[ModeName, () => Promise<System>]>)),
  ];
  const started: Array<{ mode: ModeName; system: System }> = [];
  try {
    for (const [mode, start] of starts) {
      console.log(`--- starting ${mode}`);
      started.push({ mode, system: await start() });
    }
    return started;
  } catch (error) {
    await Promise.all(started.map(({ system }) => system.stop()));
    throw error;
  }
}

/** The calls a question made in the 1-worker distributed mode at concurrency 1: the floor's pattern. */
function floorPattern(calibration: Round, grpcCalls: Record<string, number>): FloorPattern {
  const total = Object.values(grpcCalls).reduce((sum, calls) => sum + calls, 0);
  return {
    grpcCalls: round(total / calibration.questions, 2),
    natsRequests: round((calibration.natsMessages['retrieval-worker'] ?? 0) / calibration.questions, 2),
  };
}

async function measure(
  systems: Array<{ mode: ModeName; system: System }>,
): Promise<{ modes: ModeResult[]; floor?: Floor }> {
  const all = systems.map(({ system }) => system);
  console.log('--- warm-up');
  await interleaved(all, WARMUP_ROUNDS, (system) =>
    askRound(system, 8, 'json', Math.ceil(WARMUP_QUESTIONS / WARMUP_ROUNDS)),
  );
  // At concurrency 1 no hedge fires: what a question calls there is the floor's pattern.
  const distributed = all[1];
  let floorCaller: FloorCaller | undefined;
  let pattern: FloorPattern | undefined;
  if (distributed) {
    const before = await clientCalls(distributed.reasonerMetricsUrl, 'hopline_grpc_requests_total', 'method');
    const calibration = await askRound(distributed, 1, 'json', CALIBRATION_QUESTIONS);
    const after = await clientCalls(distributed.reasonerMetricsUrl, 'hopline_grpc_requests_total', 'method');
    pattern = floorPattern(
      calibration,
      Object.fromEntries(Object.entries(after).map(([key, total]) => [key, total - (before[key] ?? 0)])),
    );
    floorCaller = await startFloor(pattern);
  }
  try {
    const rssStart = all.map((system) => system.processes.map(({ child }) => rssMb(child.pid as number)));
    const grpcBefore = await Promise.all(
      all.map((system) => clientCalls(system.reasonerMetricsUrl, 'hopline_grpc_requests_total', 'method')),
    );
    const runs: RunResult[][] = all.map(() => []);
    const floorTimes: number[] = [];
    for (const concurrency of CONCURRENCIES) {
      for (const format of FORMATS) {
        const perRound = Math.max(Math.ceil(QUESTIONS_PER_RUN / ROUNDS), 3 * concurrency);
        // The floor takes its turns among the runs its ratio compares: concurrency 1, JSON.
        const floorTurn =
          floorCaller && concurrency === 1 && format === 'json'
            ? async () => {
                floorTimes.push(...(await (floorCaller as FloorCaller).round(Math.ceil(FLOOR_QUESTIONS / ROUNDS))));
              }
            : undefined;
        const rounds = await interleaved(
          all,
          ROUNDS,
          (system) => askRound(system, concurrency, format, perRound),
          floorTurn,
        );
        all.forEach((system, index) => {
          const result = summed(system, concurrency, format, rounds[index] ?? []);
          console.log(systems[index]?.mode, JSON.stringify(result));
          runs[index]?.push(result);
        });
      }
    }
    const modes = await Promise.all(
      systems.map(async ({ mode, system }, index): Promise<ModeResult> => {
        const asked = (runs[index] ?? []).reduce((sum, result) => sum + result.questions, 0);
        const grpcAfter = await clientCalls(system.reasonerMetricsUrl, 'hopline_grpc_requests_total', 'method');
        return {
          mode,
          runs: runs[index] ?? [],
          grpcCallsPerQuestion: Object.fromEntries(
            Object.entries(grpcAfter).map(([key, total]) => [
              key,
              round((total - (grpcBefore[index]?.[key] ?? 0)) / asked),
            ]),
          ),
          rssMb: Object.fromEntries(
            system.processes.map(({ name, child }, processIndex) => [
              name,
              { start: round(rssStart[index]?.[processIndex] ?? NaN, 0), end: round(rssMb(child.pid as number), 0) },
            ]),
          ),
        };
      }),
    );
    return {
      modes,
      ...(pattern
        ? {
            floor: {
              p50: round(percentile(floorTimes, 50), 3),
              p95: round(percentile(floorTimes, 95), 3),
              ...pattern,
            },
          }
        : {}),
    };
  } finally {
    await floorCaller?.stop();
  }
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'hopline-bench-question-'));
  const resultsDir = fileURLToPath(new URL('./results/', import.meta.url));
  try {
    const systems = await startSystems(dataDir);
    let measured: { modes: ModeResult[]; floor?: Floor };
    try {
      measured = await measure(systems);
    } catch (error) {
      for (const { system } of systems) {
        for (const proc of system.processes) console.error(`--- ${proc.name}\n${proc.output()}`);
      }
      throw error;
    } finally {
      await Promise.all(systems.map(({ system }) => system.stop()));
    }
    const { modes, floor } = measured;
    if (floor === undefined) {
      const markdown = embeddedReport(modes[0] as ModeResult);
      console.log(markdown);
      if (QUICK) return;
      writeFileSync(`${resultsDir}question-embedded.md`, markdown);
      writeFileSync(`${resultsDir}question-embedded.json`, `${JSON.stringify({ modes }, null, 2)}\n`);
      return;
    }
    const markdown = report(modes, floor);
    console.log(markdown);
    // A quick run is a smoke test: only a full run's figures are kept.
    if (QUICK) return;
    writeFileSync(`${resultsDir}question.md`, markdown);
    writeFileSync(`${resultsDir}question.json`, `${JSON.stringify({ floor, modes }, null, 2)}\n`);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** `--soak [minutes]`: the minutes given, 10 when none. */
function soakMinutes(): number | undefined {
  const at = process.argv.indexOf('--soak');
  if (at < 0) return undefined;
  const given = process.argv[at + 1];
  const minutes = given === undefined || given.startsWith('--') ? 10 : Number(given);
  if (!(minutes > 0)) throw new Error(`--soak takes a positive number of minutes, not "${given}"`);
  return minutes;
}

const soakFor = soakMinutes();
if (process.argv[2] === '--floor-server') await floorServer(process.argv[3] ?? '');
else if (soakFor !== undefined) await soak(soakFor);
else await main();
