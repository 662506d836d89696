// What carrying a question's events through its JetStream log costs (issue 9), against the
// plain publish the hop-reasoner used before, measured in the same run:
//   core    the QaEvent published on a core NATS subject, received by a subscriber
//   log     the QaEvent appended to the question's log (a JetStream publish naming the sequence
//           it follows, awaiting the stream's ack: what QuestionWriter does) and received by a
//           QuestionLog.follow reader (an ordered consumer): what a gateway reads now
//   pipelined the same log written through an EventPipeline, as the hop-reasoner writes now:
//           the writer does not wait for each ack, and tokens queued behind a write go as one
// Two measurements per path, each with the writer and the reader on connections of their own:
//   one event   the time from the write to its receipt, one event in flight at a time
//   a question  100 token events written one after another (core and log wait for each write
//               before the next, as the hop-reasoner did; pipelined does not): the time from the
//               first write to the receipt of the last token's text
// The same for the memory bus (the embedded mode). Variants run interleaved in rounds so that
// drift on a shared machine hits all of them alike.
//
//   node --conditions=@hopline/source --import tsx bench/question-events.ts
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { connectNatsBus, createMemoryBroker, type Bus } from '@hopline/bus';
import { codecs, type QaEvent } from '@hopline/contracts';
import { EventPipeline, openQuestionStreams, type QuestionStreams } from '@hopline/questions';
import { startNats } from '@hopline/test-support';
import { machineDescription } from './support/machine.js';

const ROUNDS = 10;
const SINGLE_EVENTS_PER_ROUND = 60;
const QUESTIONS_PER_ROUND = 3;
const EVENTS_PER_QUESTION = 100;
const WARMUP_ROUNDS = 1;

interface Pair {
  writer: Bus;
  reader: Bus;
  writerStreams: QuestionStreams;
  readerStreams: QuestionStreams;
}

type Path = 'core' | 'log' | 'pipelined';
type Transport = 'nats' | 'memory';
type Variant = `${Transport} ${Path}`;

const token = (questionId: string, seq: number): QaEvent => ({
  questionId,
  seq,
  attempt: 1,
  atUnixMs: Date.now(),
  event: 'token',
  token: { text: `token${seq} ` },
});

/**
 * Writes `count` events of one new question on `path`, each only after the previous write
 * returned, and resolves with the time from each write to the receipt of that event.
 */
async function stream(pair: Pair, path: Path, count: number, eachAlone: boolean): Promise<number[]> {
  const questionId = randomUUID();
  const received: number[] = [];
  const waiting: Array<() => void> = [];
  const arrived = (seq: number) => {
    received[seq] = performance.now();
    waiting[seq]?.();
  };
  const arrival = (seq: number) =>
    received[seq] !== undefined ? Promise.resolve() : new Promise<void>((resolve) => (waiting[seq] = resolve));

  const stop = new AbortController();
  let reading: Promise<void>;
  let write: (seq: number) => Promise<void>;
  if (path === 'core') {
    const subject = `bench.qa.${questionId}.events`;
    const subscription = pair.reader.subscribe(subject, {}, (message) =>
      arrived(codecs.qaEvent.decode(message.data).seq),
    );
    await pair.reader.flush();
    reading = new Promise<void>((resolve) => stop.signal.addEventListener('abort', () => resolve())).then(() =>
      subscription.unsubscribe(),
    );
    write = async (seq) => pair.writer.publish(subject, codecs.qaEvent.encode(token(questionId, seq)));
  } else if (path === 'pipelined') {
    const pipeline = new EventPipeline(
      pair.writerStreams.log.writer(
        questionId,
        { tenantId: 'bench', userId: 'bench', kbIds: ['bench'], deadlineUnixMs: 0 },
        1,
      ),
      0,
    );
    reading = (async () => {
      for await (const event of pair.readerStreams.log.follow(questionId, 0, stop.signal)) {
        // Joined tokens carry several "token<seq> " texts: each marks its seq as received.
        for (const match of (event.token?.text ?? '').matchAll(/token(\d+) /g)) arrived(Number(match[1]));
      }
    })();
    write = async (seq) => {
      pipeline.push({ event: 'token', token: { text: `token${seq} ` } });
      if (seq === count) await pipeline.flush();
    };
  } else {
    const writer = pair.writerStreams.log.writer(
      questionId,
      { tenantId: 'bench', userId: 'bench', kbIds: ['bench'], deadlineUnixMs: 0 },
      1,
    );
    reading = (async () => {
      for await (const event of pair.readerStreams.log.follow(questionId, 0, stop.signal)) arrived(event.seq);
    })();
    write = async () => {
      const { questionId: _id, seq: _seq, attempt: _attempt, atUnixMs: _at, ...body } = token(questionId, 0);
      await writer.append(body, 0);
    };
  }
  const started: number[] = [];
  for (let seq = 1; seq <= count; seq++) {
    started[seq] = performance.now();
    await write(seq);
    if (eachAlone) await arrival(seq);
  }
  await arrival(count);
  stop.abort();
  await reading;
  return eachAlone
    ? started.slice(1).map((at, index) => (received[index + 1] as number) - at)
    : [(received[count] as number) - (started[1] as number)];
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

async function pairOn(connect: () => Promise<Bus>): Promise<Pair> {
  const [writer, reader] = [await connect(), await connect()];
  return {
    writer,
    reader,
    writerStreams: await openQuestionStreams(writer),
    readerStreams: await openQuestionStreams(reader),
  };
}

async function main(): Promise<void> {
  const nats = await startNats();
  if (!nats.url) throw new Error(`no NATS server: ${nats.skipReason ?? ''}`);
  const natsUrl = nats.url;
  const broker = createMemoryBroker();
  const pairs: Record<Transport, Pair> = {
    nats: await pairOn(() => connectNatsBus({ url: natsUrl, name: 'bench-question-events' })),
    memory: await pairOn(async () => broker.connect()),
  };
  const variants: Variant[] = [
    'nats core',
    'nats log',
    'nats pipelined',
    'memory core',
    'memory log',
    'memory pipelined',
  ];
  const single = Object.fromEntries(variants.map((variant) => [variant, [] as number[]])) as Record<Variant, number[]>;
  const question = Object.fromEntries(variants.map((variant) => [variant, [] as number[]])) as Record<
    Variant,
    number[]
  >;
  for (let round = 0; round < WARMUP_ROUNDS + ROUNDS; round++) {
    for (const variant of variants) {
      const [transport, path] = variant.split(' ') as [Transport, Path];
      const pair = pairs[transport];
      const eventTimes = await stream(pair, path, SINGLE_EVENTS_PER_ROUND, true);
      const questionTimes: number[] = [];
      for (let q = 0; q < QUESTIONS_PER_ROUND; q++)
        questionTimes.push(...(await stream(pair, path, EVENTS_PER_QUESTION, false)));
      if (round < WARMUP_ROUNDS) continue;
      single[variant].push(...eventTimes);
      question[variant].push(...questionTimes);
    }
  }
  for (const pair of Object.values(pairs)) await Promise.all([pair.writer.drain(), pair.reader.drain()]);
  await nats[Symbol.asyncDispose]();

  const summary = (values: number[]) => ({
    p50: Number(percentile(values, 50).toFixed(3)),
    p95: Number(percentile(values, 95).toFixed(3)),
    n: values.length,
  });
  const results = {
    single: Object.fromEntries(variants.map((variant) => [variant, summary(single[variant])])),
    question: Object.fromEntries(variants.map((variant) => [variant, summary(question[variant])])),
  };
  const ratio = (table: Record<Variant, number[]>, transport: Transport, p: number, path: Path = 'log') =>
    (percentile(table[`${transport} ${path}`], p) / percentile(table[`${transport} core`], p)).toFixed(2);
  const command = 'node --conditions=@hopline/source --import tsx bench/question-events.ts';
  const row = (name: string, values: number[]) =>
    `| ${name} | ${percentile(values, 50).toFixed(3)} | ${percentile(values, 95).toFixed(3)} | ${values.length} |`;
  const markdown = [
    '# Question events: the JetStream log against a plain publish',
    '',
    `Command: \`${command}\``,
    '',
    `Machine: ${machineDescription()}, nats-server ${nats.source === 'spawned' ? 'spawned by the bench (file storage in a temporary folder)' : `at ${natsUrl}`}. Load average while it ran: ${loadavg()
      .map((load) => load.toFixed(1))
      .join(' / ')} (1/5/15 min) on a machine shared with other work.`,
    `${ROUNDS} interleaved rounds after ${WARMUP_ROUNDS} of warm-up; each round per variant: ${SINGLE_EVENTS_PER_ROUND} events one at a time, then ${QUESTIONS_PER_ROUND} questions of ${EVENTS_PER_QUESTION} token events. Writer and reader on connections of their own, in one process.`,
    '',
    '## One event: from its write to its receipt (ms)',
    '',
    '| variant | p50 | p95 | n |',
    '| --- | ---: | ---: | ---: |',
    ...variants.map((variant) => row(variant, single[variant])),
    '',
    `## A question of ${EVENTS_PER_QUESTION} events (core and log await each write, pipelined does not): from the first write to the receipt of the last (ms)`,
    '',
    '| variant | p50 | p95 | n |',
    '| --- | ---: | ---: | ---: |',
    ...variants.map((variant) => row(variant, question[variant])),
    '',
    '| ratio: log / core | p50 | p95 |',
    '| --- | ---: | ---: |',
    `| NATS, one event | ${ratio(single, 'nats', 50)} | ${ratio(single, 'nats', 95)} |`,
    `| NATS, a question of ${EVENTS_PER_QUESTION} events | ${ratio(question, 'nats', 50)} | ${ratio(question, 'nats', 95)} |`,
    `| NATS, a question of ${EVENTS_PER_QUESTION} events, pipelined | ${ratio(question, 'nats', 50, 'pipelined')} | ${ratio(question, 'nats', 95, 'pipelined')} |`,
    `| memory bus, one event | ${ratio(single, 'memory', 50)} | ${ratio(single, 'memory', 95)} |`,
    `| memory bus, a question of ${EVENTS_PER_QUESTION} events | ${ratio(question, 'memory', 50)} | ${ratio(question, 'memory', 95)} |`,
    `| memory bus, a question of ${EVENTS_PER_QUESTION} events, pipelined | ${ratio(question, 'memory', 50, 'pipelined')} | ${ratio(question, 'memory', 95, 'pipelined')} |`,
    '',
  ].join('\n');
  const resultsDir = fileURLToPath(new URL('./results/', import.meta.url));
  writeFileSync(`${resultsDir}question-events.md`, markdown);
  writeFileSync(`${resultsDir}question-events.json`, `${JSON.stringify({ command, ...results }, null, 2)}\n`);
  console.log(markdown);
}

await main();
