// The cost of the gRPC helpers over raw grpc-js, between two processes, with a 20 KB reply
// (issue 2: the clients may add at most 10% to a raw unary call). A child process serves
// Reranker.Rerank twice, on two ports:
//   raw      a plain grpc-js server handler, called with the generated client's callback API
//   helpers  createGrpcServer's async handler (SERVER span, AbortSignal, error mapping), called
//            with unaryCall (deadline from an absolute deadline, CLIENT span, metadata injection)
//   control  a second raw server and client, identical to raw: control / raw is the noise floor
//            of this machine, to read the helpers' ratio against
// Tracing runs on the API's default no-op provider, as in a service started without the SDK.
// Both use the same generated client constructor and codecs. Variants run interleaved in rounds
// so that drift on a shared machine hits both alike. Besides latency, the CPU time both
// processes spend per call is counted per variant (asked of the server between blocks, outside
// the timed calls): on a machine shared with other work, a microsecond of CPU can cost several
// of wall time, and the CPU figure is what the helpers themselves add.
//
//   node --conditions=@hopline/source --import tsx bench/grpc.ts
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import { loadHoplineGrpc, type RerankRequest, type RerankResponse } from '@hopline/contracts';
import { createClient, createGrpcServer, unaryCall } from '@hopline/grpc';
import { sampleChunks, sampleContext, sampleQuestion } from './support/payload.js';

const WARMUP = 300;
const ROUNDS = 30;
const PER_ROUND = 200;
const DEADLINE_MS = 5_000;

const { Reranker } = loadHoplineGrpc().hopline.v1;

function rerankResponse(): RerankResponse {
  return {
    chunks: sampleChunks(true),
    fallback: false,
    scorer: 'bench',
  };
}

const rerankRequest: RerankRequest = {
  ctx: sampleContext(600_000),
  query: sampleQuestion,
  topN: 10,
};

async function server(): Promise<void> {
  const reply = rerankResponse();
  const raw = new grpc.Server();
  raw.addService(Reranker.service, {
    Rerank: (_call: unknown, callback: grpc.sendUnaryData<RerankResponse>) => callback(null, reply),
  });
  const rawPort = await new Promise<number>((resolve, reject) =>
    raw.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, port) =>
      error ? reject(error) : resolve(port),
    ),
  );
  const control = new grpc.Server();
  control.addService(Reranker.service, {
    Rerank: (_call: unknown, callback: grpc.sendUnaryData<RerankResponse>) => callback(null, reply),
  });
  const controlPort = await new Promise<number>((resolve, reject) =>
    control.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, port) =>
      error ? reject(error) : resolve(port),
    ),
  );
  const helpers = createGrpcServer();
  helpers.addService(Reranker, { Rerank: async () => reply });
  const helpersPort = await helpers.listen('127.0.0.1', 0);
  // The client asks for this process's CPU time between blocks of calls.
  process.on('message', () => process.send?.(process.cpuUsage()));
  console.log(JSON.stringify({ rawPort, controlPort, helpersPort }));
  process.once('SIGTERM', () => {
    raw.forceShutdown();
    control.forceShutdown();
    void helpers.shutdown({ graceMs: 0 }).then(() => process.exit(0));
  });
}

type Variant = 'raw' | 'control' | 'helpers';

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

async function client(): Promise<void> {
  const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), '--server'], {
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  const serverCpu = () =>
    new Promise<NodeJS.CpuUsage>((resolve) => {
      child.once('message', (usage) => resolve(usage as NodeJS.CpuUsage));
      child.send('cpu');
    });
  const cpuMicros = (usage: NodeJS.CpuUsage) => usage.user + usage.system;
  if (!child.stdout) throw new Error('the server process has no stdout');
  const lines = createInterface({ input: child.stdout });
  type Ports = { rawPort: number; controlPort: number; helpersPort: number };
  const ports = await new Promise<Ports>((resolve, reject) => {
    lines.once('line', (line) => resolve(JSON.parse(line) as Ports));
    child.once('exit', (code) => reject(new Error(`server exited with ${String(code)}`)));
  });

  // The same channel options for both, so that only the helpers differ.
  const rawClient = createClient(Reranker, `127.0.0.1:${ports.rawPort}`);
  const controlClient = createClient(Reranker, `127.0.0.1:${ports.controlPort}`);
  const helpersClient = createClient(Reranker, `127.0.0.1:${ports.helpersPort}`);
  const rawCall = (target: InstanceType<typeof Reranker>) =>
    new Promise<void>((resolve, reject) => {
      target.Rerank(rerankRequest, new grpc.Metadata(), { deadline: Date.now() + DEADLINE_MS }, (error, response) => {
        if (error || !response) reject(error ?? new Error('no response'));
        else resolve();
      });
    });
  const once: Record<Variant, () => Promise<void>> = {
    raw: () => rawCall(rawClient),
    control: () => rawCall(controlClient),
    helpers: async () => {
      await unaryCall(helpersClient, 'Rerank', rerankRequest, { deadlineUnixMs: Date.now() + DEADLINE_MS });
    },
  };
  const variants = Object.keys(once) as Variant[];
  const samples: Record<Variant, number[]> = { raw: [], control: [], helpers: [] };
  const cpuSpent: Record<Variant, number> = { raw: 0, control: 0, helpers: 0 };

  const replySize = Reranker.service.Rerank.responseSerialize(rerankResponse()).byteLength;
  for (const variant of variants) for (let i = 0; i < WARMUP; i++) await once[variant]();
  for (let round = 0; round < ROUNDS; round++) {
    const order = variants.map((_, i) => variants[(i + round) % variants.length] as Variant);
    for (const variant of order) {
      const serverBefore = await serverCpu();
      const clientBefore = process.cpuUsage();
      for (let i = 0; i < PER_ROUND; i++) {
        const start = process.hrtime.bigint();
        await once[variant]();
        samples[variant].push(Number(process.hrtime.bigint() - start) / 1e6);
      }
      const clientSpent = cpuMicros(process.cpuUsage(clientBefore));
      cpuSpent[variant] += clientSpent + cpuMicros(await serverCpu()) - cpuMicros(serverBefore);
    }
  }
  rawClient.close();
  controlClient.close();
  helpersClient.close();
  child.kill('SIGTERM');

  const latency = Object.fromEntries(
    variants.map((variant) => {
      const sorted = [...samples[variant]].sort((a, b) => a - b);
      return [variant, { p50: percentile(sorted, 50), p95: percentile(sorted, 95), n: sorted.length }];
    }),
  ) as Record<Variant, { p50: number; p95: number; n: number }>;
  const cpuPerCallUs = Object.fromEntries(
    variants.map((variant) => [variant, cpuSpent[variant] / samples[variant].length]),
  ) as Record<Variant, number>;
  const ratio = {
    p50: latency.helpers.p50 / latency.raw.p50,
    p95: latency.helpers.p95 / latency.raw.p95,
    cpu: cpuPerCallUs.helpers / cpuPerCallUs.raw,
  };
  const noiseFloor = {
    p50: latency.control.p50 / latency.raw.p50,
    p95: latency.control.p95 / latency.raw.p95,
    cpu: cpuPerCallUs.control / cpuPerCallUs.raw,
  };
  const target = 1.1;
  const cpu = cpus();
  const machine = `${cpu.length} × ${cpu[0]?.model.trim() ?? 'unknown CPU'}, Node ${process.version}`;
  const command = 'node --conditions=@hopline/source --import tsx bench/grpc.ts';

  const results = {
    command,
    machine,
    replyBytes: replySize,
    warmup: WARMUP,
    rounds: ROUNDS,
    perRound: PER_ROUND,
    latencyMs: latency,
    cpuPerCallUs,
    ratio,
    noiseFloor,
    target,
    loadAverage: loadavg(),
  };
  const resultsDir = fileURLToPath(new URL('./results/', import.meta.url));
  writeFileSync(`${resultsDir}grpc.json`, `${JSON.stringify(results, null, 2)}\n`);
  const fmt = (n: number) => n.toFixed(3);
  const verdict = (n: number) => (n <= target ? 'within target' : 'OVER');
  const markdown = [
    '# gRPC helpers overhead over raw grpc-js (20 KB reply, two processes)',
    '',
    `Command: \`${command}\``,
    '',
    `Machine: ${machine}. Reply: ${replySize} bytes.`,
    `One call in flight at a time; ${ROUNDS} interleaved rounds of ${PER_ROUND} per variant after ${WARMUP} warm-up calls each.`,
    'Tracing on the no-op provider (no SDK started).',
    '',
    `Load average during the run (1, 5, 15 min): ${loadavg()
      .map((n) => n.toFixed(1))
      .join(', ')} on ${cpu.length} CPUs.`,
    '',
    '| variant | p50 ms | p95 ms | CPU µs per call (both processes) | n |',
    '| --- | ---: | ---: | ---: | ---: |',
    ...variants.map(
      (variant) =>
        `| ${variant} | ${fmt(latency[variant].p50)} | ${fmt(latency[variant].p95)} | ${cpuPerCallUs[variant].toFixed(0)} | ${latency[variant].n} |`,
    ),
    '',
    `| ratio (target ≤ ${target}) | p50 | p95 | CPU |`,
    '| --- | ---: | ---: | ---: |',
    `| helpers / raw (createGrpcServer handler + unaryCall) | ${ratio.p50.toFixed(2)} (${verdict(ratio.p50)}) | ${ratio.p95.toFixed(2)} | ${ratio.cpu.toFixed(2)} |`,
    `| control / raw (identical raw pairs: the noise floor) | ${noiseFloor.p50.toFixed(2)} | ${noiseFloor.p95.toFixed(2)} | ${noiseFloor.cpu.toFixed(2)} |`,
    '',
    `Two identical raw pairs differ by ${Math.abs(1 - noiseFloor.p50).toFixed(2)} at p50 in this run: read the helpers' ratio with that margin.`,
    'p95 on a shared two-core machine mostly measures the neighbours; the p50 and CPU ratios are the figures to compare.',
    '',
  ].join('\n');
  writeFileSync(`${resultsDir}grpc.md`, markdown);
  console.log(markdown);
}

if (process.argv.includes('--server')) await server();
else await client();
