// Admission control at the answer-gateway (issue 4): beyond the bound on questions in flight a
// request gets 429 "fast, and the questions already running are not slowed". Measured here:
//   running        MAX_IN_FLIGHT questions streamed over SSE at once, filling every slot: the
//                  time from the ask to the last of 300 tokens, from a hop-reasoner stand-in on
//                  the memory bus (each is then held open, so no slot frees during a phase)
//   running+flood  the same while a flooder in another process sends FLOOD_PER_SECOND asks a
//                  second over 16 connections, all refused because every slot is taken
//   refused        the flooder's 429s, from request to response
// Phases alternate in rounds so that drift on a shared machine hits both alike.
//
//   node --conditions=@hopline/source --import tsx bench/gateway-admission.ts
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { setTimeout as sleep, setImmediate as yieldToLoop } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { ApiKeyStore, generateApiKey, hashApiKey } from '@hopline/answer-gateway';
import { startScriptedGateway } from './support/scripted-gateway.js';
import { machineDescription } from './support/machine.js';

const MAX_IN_FLIGHT = 8;
const ROUNDS = 12;
const TOKENS = 300;
const FLOOD_PER_SECOND = 400;
const FLOOD_CONNECTIONS = 16;

if (process.argv[2] === '--flood') {
  // Child: on "go", sends `perSecond` asks a second over `concurrency` connections until
  // "pause", then reports the latency of each 429 it got; "exit" ends it.
  const [url, key, concurrency, perSecond] = [
    process.argv[3] ?? '',
    process.argv[4] ?? '',
    Number(process.argv[5] ?? 16),
    Number(process.argv[6] ?? 400),
  ];
  const intervalMs = (1000 * concurrency) / perSecond;
  const nextMessage = () => new Promise<unknown>((resolve) => process.once('message', resolve));
  // Connections are opened before anything is measured.
  await Promise.all(
    Array.from({ length: concurrency }, () => fetch(`${url}/`).then((response) => response.arrayBuffer())),
  );
  process.send?.('ready');
  while ((await nextMessage()) === 'go') {
    const latencies: number[] = [];
    let flooding = true;
    void nextMessage().then(() => {
      flooding = false;
    });
    const worker = async (index: number) => {
      await sleep((index * intervalMs) / concurrency);
      for (let next = performance.now(); flooding; next += intervalMs) {
        await sleep(next - performance.now());
        const started = performance.now();
        const response = await fetch(`${url}/v1/ask`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({ question: 'flood' }),
        });
        await response.arrayBuffer();
        if (response.status === 429) latencies.push(performance.now() - started);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, (_, index) => worker(index)));
    process.send?.(latencies);
  }
  process.exit(0);
} else {
  await main();
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

async function main(): Promise<void> {
  const heldOpen = new Set<() => void>();
  const releaseHeld = () => {
    for (const release of heldOpen) release();
    heldOpen.clear();
  };
  const askerKey = generateApiKey();
  const flooderKey = generateApiKey();
  const entry = (key: string, userId: string) => ({
    keyHash: hashApiKey(key),
    tenantId: 'bench',
    userId,
    kbIds: ['kb'],
    canIngest: false,
  });
  const scripted = await startScriptedGateway({
    async script(write) {
      await write({ event: 'accepted', accepted: {} });
      await write({ event: 'route', route: { route: 'SINGLE' } });
      for (let i = 0; i < TOKENS; i++) {
        await write({ event: 'token', token: { text: `token${i} ` } });
        await yieldToLoop();
      }
      // Held open until the phase ends, so that its slot stays taken while others are measured.
      await new Promise<void>((resolve) => heldOpen.add(resolve));
      await write({ event: 'done', done: { answer: 'bench', stopReason: 'NOT_ITERATIVE' } });
    },
    keys: new ApiKeyStore({ keys: [entry(askerKey, 'asker'), entry(flooderKey, 'flooder')] }),
    config: { MAX_IN_FLIGHT },
  });
  const { gateway, url } = scripted;

  let question = 0;
  /**
   * Asks one question over SSE (each distinct, so none comes from the cache). `streamed`
   * resolves with the time from the ask to its last token; `ended` when the stream closes.
   */
  const streamOne = async (): Promise<{ streamed: Promise<number>; ended: Promise<void> }> => {
    const started = performance.now();
    const response = await fetch(`${url}/v1/ask`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${askerKey}`, 'Content-Type': 'application/json', Accept: 'text/event-stream' },
      body: JSON.stringify({ question: `question ${question++}` }),
    });
    if (response.status !== 200 || !response.body)
      throw new Error(`a running question was refused: ${response.status}`);
    let markStreamed: (ms: number) => void = () => {};
    const streamed = new Promise<number>((resolve) => (markStreamed = resolve));
    const body = response.body;
    const ended = (async () => {
      const decoder = new TextDecoder();
      let buffer = '';
      let tokens = 0;
      for await (const bytes of body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(bytes, { stream: true });
        const frames = buffer.split('\n\n');
        buffer = frames.pop() ?? '';
        tokens += frames.filter((frame) => frame.includes('event: token')).length;
        if (tokens === TOKENS) markStreamed(performance.now() - started);
      }
    })();
    return { streamed, ended };
  };
  /** Fills every slot with a question; resolves with their streaming times, then ends them. */
  const fillEverySlot = async (
    whileStreaming: { started(): void; streamed(): Promise<void> } = { started: () => {}, streamed: async () => {} },
  ) => {
    const streams = await Promise.all(Array.from({ length: MAX_IN_FLIGHT }, streamOne));
    whileStreaming.started();
    const times = await Promise.all(streams.map((stream) => stream.streamed));
    await whileStreaming.streamed();
    releaseHeld();
    await Promise.all(streams.map((stream) => stream.ended));
    return times;
  };
  const idle = async () => {
    while (gateway.health().details.inFlight !== 0) {
      releaseHeld();
      await yieldToLoop();
    }
  };

  await fillEverySlot();
  await fillEverySlot();
  const quiet: number[] = [];
  const flooded: number[] = [];
  const refused: number[] = [];
  // One flooder for the whole run, idle in the quiet phases: its start-up is not measured.
  const flooder: ChildProcess = spawn(
    process.execPath,
    [
      '--conditions=@hopline/source',
      '--import',
      'tsx',
      fileURLToPath(import.meta.url),
      '--flood',
      url,
      flooderKey,
      String(FLOOD_CONNECTIONS),
      String(FLOOD_PER_SECOND),
    ],
    { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
  );
  const fromFlooder = () => new Promise<unknown>((resolve) => flooder.once('message', resolve));
  await fromFlooder();
  for (let round = 0; round < ROUNDS; round++) {
    quiet.push(...(await fillEverySlot()));
    await idle();
    // Every slot is taken (each question is held open after its tokens) for as long as the
    // flood runs, so each of its asks is refused and none adds a question of its own.
    let report: Promise<unknown> = Promise.resolve([]);
    flooded.push(
      ...(await fillEverySlot({
        started: () => {
          report = fromFlooder();
          flooder.send('go');
        },
        streamed: async () => {
          flooder.send('pause');
          refused.push(...((await report) as number[]));
        },
      })),
    );
    await idle();
  }
  flooder.send('exit');
  await scripted.stop(1_000);

  const row = (name: string, values: number[]) =>
    `| ${name} | ${percentile(values, 50).toFixed(2)} | ${percentile(values, 95).toFixed(2)} | ${values.length} |`;
  const ratio = (a: number[], b: number[], p: number) => (percentile(a, p) / percentile(b, p)).toFixed(2);
  const report = [
    '# Answer-gateway admission: 429s under load, and the questions running beside them',
    '',
    'Command: `node --conditions=@hopline/source --import tsx bench/gateway-admission.ts`',
    '',
    `Machine: ${machineDescription()}. MAX_IN_FLIGHT=${MAX_IN_FLIGHT}; a question is a route and ${TOKENS} tokens from a stand-in hop-reasoner on the memory bus, streamed over SSE, then held open so that every slot stays taken.`,
    `${ROUNDS} rounds; each round runs ${MAX_IN_FLIGHT} questions at once without, then with, a flooder process sending ${FLOOD_PER_SECOND} asks/s over ${FLOOD_CONNECTIONS} connections.`,
    `Load average while it ran: ${loadavg()
      .map((load) => load.toFixed(1))
      .join(' / ')} (1/5/15 min) on a machine shared with other work.`,
    '',
    '| measurement | p50 ms | p95 ms | n |',
    '| --- | ---: | ---: | ---: |',
    row('running question, no flood (ask → last token)', quiet),
    row('running question, during the flood', flooded),
    row('refused question (429)', refused),
    '',
    '| ratio | p50 | p95 |',
    '| --- | ---: | ---: |',
    `| refused / running (how fast a 429 comes back, against a question's time) | ${ratio(refused, quiet, 50)} | ${ratio(refused, quiet, 95)} |`,
    `| running during flood / running without (what the flood costs running questions) | ${ratio(flooded, quiet, 50)} | ${ratio(flooded, quiet, 95)} |`,
    '',
    'All of it runs on the same cores: the flooder process and the gateway compete for CPU, which is',
    'part of what the second ratio shows. The refusal itself takes no slot and waits for nothing.',
    '',
  ].join('\n');
  const resultsDir = fileURLToPath(new URL('./results/', import.meta.url));
  writeFileSync(`${resultsDir}gateway-admission.md`, report);
  writeFileSync(
    `${resultsDir}gateway-admission.json`,
    `${JSON.stringify({ quiet: { p50: percentile(quiet, 50), p95: percentile(quiet, 95) }, flooded: { p50: percentile(flooded, 50), p95: percentile(flooded, 95) }, refused: { p50: percentile(refused, 50), p95: percentile(refused, 95), n: refused.length } }, null, 2)}\n`,
  );
  console.log(report);
}
