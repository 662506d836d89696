// The cost of the bus over raw NATS, between two processes, with a 20 KB reply (issue 2: the
// bus may add at most 10% to a raw request/reply). A child process answers on four subjects:
//   raw         nats.js request/reply with its default options, fixed bytes, no codec
//   rawTuned    the same with noAsyncTraces, the option the bus's NATS adapter sets
//   busClient   the bus requesting from the raw responder: the requester side of the bus alone
//   busServer   rawTuned requesting from a bus endpoint: the responder side of the bus alone
//   bus         the bus on both sides (NATS adapter, tracing with the default no-op provider)
//   rawCodec    nats.js with the protobuf work of a real retrieve call on both sides
//   busCodec    the bus with the same protobuf work: what a service actually pays
// Variants run interleaved in rounds so that drift on a shared machine hits all of them alike.
// Also: protobufjs decoding the same bytes as a plain Uint8Array (as nats.js hands them) and as
// a Buffer view of them (what the contracts codecs do, without copying).
//
//   node --conditions=@hopline/source --import tsx bench/bus.ts
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { connectNatsBus, type Bus } from '@hopline/bus';
import { codecs, loadProtobufRoot, type RetrieveResponse } from '@hopline/contracts';
import { startNats } from '@hopline/test-support';
import { connect, type NatsConnection } from 'nats';
import { sampleChunks, sampleContext, sampleQuestion } from './support/payload.js';
import { machineDescription } from './support/machine.js';

const SUBJECTS = {
  raw: 'bench.bus.raw',
  rawCodec: 'bench.bus.raw-codec',
  bus: 'bench.bus.bus',
  busCodec: 'bench.bus.bus-codec',
} as const;
const TIMEOUT_MS = 5_000;
const WARMUP = 300;
const ROUNDS = 12;
const PER_ROUND = 150;
const DECODE_ITERATIONS = 3_000;

function retrieveResponse(): RetrieveResponse {
  return {
    chunks: sampleChunks(),
    degraded: false,
    timings: { bm25Ms: 1.2, vectorMs: 2.3, fusionMs: 0.1 },
    workerId: 'bench-worker',
  };
}

const retrieveRequest = {
  ctx: sampleContext(60_000),
  query: sampleQuestion,
  topK: 10,
  hop: 1,
};

async function responder(url: string): Promise<void> {
  const nc = await connect({ servers: url, name: 'bench-responder-raw' });
  const bus = await connectNatsBus({ url, name: 'bench-responder-bus' });
  const replyBytes = codecs.retrieveResponse.encode(retrieveResponse());
  nc.subscribe(SUBJECTS.raw, { callback: (_error, msg) => msg.respond(replyBytes) });
  nc.subscribe(SUBJECTS.rawCodec, {
    callback: (_error, msg) => {
      codecs.retrieveRequest.decode(msg.data);
      msg.respond(codecs.retrieveResponse.encode(retrieveResponse()));
    },
  });
  await bus.serve({
    name: 'bench-responder',
    version: '1.0.0',
    endpoints: [
      { name: 'bytes', subject: SUBJECTS.bus, handle: async () => ({ data: replyBytes }) },
      {
        name: 'codec',
        subject: SUBJECTS.busCodec,
        handle: async (request) => {
          codecs.retrieveRequest.decode(request.data);
          return { data: codecs.retrieveResponse.encode(retrieveResponse()) };
        },
      },
    ],
  });
  await nc.flush();
  console.log('ready');
  process.once('SIGTERM', () => {
    void Promise.all([bus.drain(), nc.drain()]).then(() => process.exit(0));
  });
}

type Variant = keyof typeof SUBJECTS | 'rawTuned' | 'busClient' | 'busServer';

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

async function requester(url: string): Promise<void> {
  const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), '--responder', url], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout });
  await new Promise<void>((resolve, reject) => {
    lines.once('line', (line) => (line === 'ready' ? resolve() : reject(new Error(`responder said: ${line}`))));
    child.once('exit', (code) => reject(new Error(`responder exited with ${String(code)}`)));
  });

  const nc: NatsConnection = await connect({ servers: url, name: 'bench-requester-raw' });
  const tuned: NatsConnection = await connect({ servers: url, name: 'bench-requester-raw-tuned', noAsyncTraces: true });
  const bus: Bus = await connectNatsBus({ url, name: 'bench-requester-bus' });
  const requestBytes = codecs.retrieveRequest.encode(retrieveRequest);
  let replySize = 0;
  const once: Record<Variant, () => Promise<void>> = {
    raw: async () => {
      replySize = (await nc.request(SUBJECTS.raw, requestBytes, { timeout: TIMEOUT_MS })).data.byteLength;
    },
    rawTuned: async () => {
      await tuned.request(SUBJECTS.raw, requestBytes, { timeout: TIMEOUT_MS });
    },
    busClient: async () => {
      await bus.request(SUBJECTS.raw, requestBytes, { timeoutMs: TIMEOUT_MS });
    },
    busServer: async () => {
      await tuned.request(SUBJECTS.bus, requestBytes, { timeout: TIMEOUT_MS });
    },
    rawCodec: async () => {
      const msg = await nc.request(SUBJECTS.rawCodec, codecs.retrieveRequest.encode(retrieveRequest), {
        timeout: TIMEOUT_MS,
      });
      codecs.retrieveResponse.decode(msg.data);
    },
    bus: async () => {
      await bus.request(SUBJECTS.bus, requestBytes, { timeoutMs: TIMEOUT_MS });
    },
    busCodec: async () => {
      const reply = await bus.request(SUBJECTS.busCodec, codecs.retrieveRequest.encode(retrieveRequest), {
        timeoutMs: TIMEOUT_MS,
      });
      codecs.retrieveResponse.decode(reply.data);
    },
  };
  const variants = Object.keys(once) as Variant[];
  const samples = Object.fromEntries(Object.keys(once).map((variant) => [variant, [] as number[]])) as Record<
    Variant,
    number[]
  >;

  for (const variant of variants) for (let i = 0; i < WARMUP; i++) await once[variant]();
  for (let round = 0; round < ROUNDS; round++) {
    const order = variants.map((_, i) => variants[(i + round) % variants.length] as Variant);
    for (const variant of order) {
      for (let i = 0; i < PER_ROUND; i++) {
        const start = process.hrtime.bigint();
        await once[variant]();
        samples[variant].push(Number(process.hrtime.bigint() - start) / 1e6);
      }
    }
  }
  child.kill('SIGTERM');
  await Promise.all([bus.drain(), nc.drain(), tuned.drain()]);

  const latency = Object.fromEntries(
    variants.map((variant) => {
      const sorted = [...samples[variant]].sort((a, b) => a - b);
      return [variant, { p50: percentile(sorted, 50), p95: percentile(sorted, 95), n: sorted.length }];
    }),
  ) as Record<Variant, { p50: number; p95: number; n: number }>;
  const ratio = (a: Variant, b: Variant) => ({
    p50: latency[a].p50 / latency[b].p50,
    p95: latency[a].p95 / latency[b].p95,
  });
  const ratios = {
    busOverRaw: ratio('bus', 'raw'),
    busOverRawTuned: ratio('bus', 'rawTuned'),
    busClientOverRawTuned: ratio('busClient', 'rawTuned'),
    busServerOverRawTuned: ratio('busServer', 'rawTuned'),
    busCodecOverRawCodec: ratio('busCodec', 'rawCodec'),
    busCodecOverRaw: ratio('busCodec', 'raw'),
  };
  const decode = measureDecode();
  report({ replySize, latency, ratios, decode });
}

function measureDecode() {
  const type = loadProtobufRoot().lookupType('hopline.v1.RetrieveResponse');
  const encoded = codecs.retrieveResponse.encode(retrieveResponse());
  const plain = new Uint8Array(encoded);
  const view = Buffer.from(plain.buffer, plain.byteOffset, plain.byteLength);
  const timeDecodes = (bytes: Uint8Array) => {
    const start = process.hrtime.bigint();
    for (let i = 0; i < DECODE_ITERATIONS; i++) type.decode(bytes);
    return Number(process.hrtime.bigint() - start) / DECODE_ITERATIONS / 1e3;
  };
  timeDecodes(plain);
  timeDecodes(view);
  const plainRuns: number[] = [];
  const viewRuns: number[] = [];
  for (let run = 0; run < 5; run++) {
    plainRuns.push(timeDecodes(plain));
    viewRuns.push(timeDecodes(view));
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
  const plainUs = median(plainRuns);
  const bufferViewUs = median(viewRuns);
  return {
    bytes: encoded.byteLength,
    plainUint8ArrayUs: plainUs,
    bufferViewUs,
    plainOverBufferView: plainUs / bufferViewUs,
  };
}

interface Results {
  replySize: number;
  latency: Record<Variant, { p50: number; p95: number; n: number }>;
  ratios: Record<string, { p50: number; p95: number }>;
  decode: ReturnType<typeof measureDecode>;
}

function report(results: Results): void {
  const command = 'node --conditions=@hopline/source --import tsx bench/bus.ts';
  const ms = (value: number) => value.toFixed(3);
  const x = (value: number) => value.toFixed(2);
  const target = 1.1;
  const verdict = (value: number) => (value <= target ? 'within' : 'OVER');
  const { latency, ratios, decode } = results;
  const markdown = [
    '# Bus overhead over raw NATS (20 KB reply, two processes)',
    '',
    `Command: \`${command}\``,
    '',
    `Machine: ${machineDescription()}. Reply: ${results.replySize} bytes.`,
    `One request in flight at a time; ${ROUNDS} interleaved rounds of ${PER_ROUND} per variant after ${WARMUP} warm-up requests each.`,
    '',
    '| variant | p50 ms | p95 ms | n |',
    '| --- | ---: | ---: | ---: |',
    ...(Object.keys(latency) as Variant[]).map(
      (variant) => `| ${variant} | ${ms(latency[variant].p50)} | ${ms(latency[variant].p95)} | ${latency[variant].n} |`,
    ),
    '',
    `| ratio (target ≤ ${target}) | p50 | p95 |`,
    '| --- | ---: | ---: |',
    `| bus / raw (adapter and tracing, vs nats.js defaults) | ${x(ratios.busOverRaw?.p50 ?? NaN)} (${verdict(ratios.busOverRaw?.p50 ?? NaN)}) | ${x(ratios.busOverRaw?.p95 ?? NaN)} |`,
    `| bus / rawTuned (vs a raw client with the same noAsyncTraces) | ${x(ratios.busOverRawTuned?.p50 ?? NaN)} (${verdict(ratios.busOverRawTuned?.p50 ?? NaN)}) | ${x(ratios.busOverRawTuned?.p95 ?? NaN)} |`,
    `| busClient / rawTuned (requester side only) | ${x(ratios.busClientOverRawTuned?.p50 ?? NaN)} | ${x(ratios.busClientOverRawTuned?.p95 ?? NaN)} |`,
    `| busServer / rawTuned (responder side only) | ${x(ratios.busServerOverRawTuned?.p50 ?? NaN)} | ${x(ratios.busServerOverRawTuned?.p95 ?? NaN)} |`,
    `| bus+codec / raw+codec (the bus, same protobuf work) | ${x(ratios.busCodecOverRawCodec?.p50 ?? NaN)} (${verdict(ratios.busCodecOverRawCodec?.p50 ?? NaN)}) | ${x(ratios.busCodecOverRawCodec?.p95 ?? NaN)} |`,
    `| bus+codec / raw (everything a service pays over bare bytes) | ${x(ratios.busCodecOverRaw?.p50 ?? NaN)} (${verdict(ratios.busCodecOverRaw?.p50 ?? NaN)}) | ${x(ratios.busCodecOverRaw?.p95 ?? NaN)} |`,
    '',
    `## protobufjs decode of the ${decode.bytes}-byte reply`,
    '',
    '| input | µs per decode |',
    '| --- | ---: |',
    `| plain Uint8Array (as nats.js hands it) | ${decode.plainUint8ArrayUs.toFixed(1)} |`,
    `| Buffer view of the same bytes (what the codecs do) | ${decode.bufferViewUs.toFixed(1)} |`,
    '',
    `Plain / Buffer view: ${x(decode.plainOverBufferView)}×.`,
    '',
  ].join('\n');
  const resultsDir = fileURLToPath(new URL('./results/', import.meta.url));
  writeFileSync(`${resultsDir}bus.md`, markdown);
  writeFileSync(`${resultsDir}bus.json`, `${JSON.stringify({ command, ...results }, null, 2)}\n`);
  console.log(markdown);
}

if (process.argv[2] === '--responder') {
  await responder(process.argv[3] ?? '');
} else {
  const nats = await startNats();
  if (nats.url === undefined) throw new Error(`bench/bus.ts needs a NATS server: ${nats.skipReason ?? ''}`);
  try {
    await requester(nats.url);
  } finally {
    await nats[Symbol.asyncDispose]();
  }
}
