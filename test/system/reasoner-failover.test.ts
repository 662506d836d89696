import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { connectNatsBus, type Bus, type KeyValueStore } from '@hopline/bus';
import { codecs, type ReasoningTrace__Output } from '@hopline/contracts';
import { startQuestionJobs } from '@hopline/hop-reasoner';
import { openQuestionStreams } from '@hopline/questions';
import { createLogger, createMetrics } from '@hopline/telemetry';
import { startNats, waitFor } from '@hopline/test-support';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { askSse, startGatewayOn, testKeys } from '../../services/answer-gateway/test/support/harness.js';
import { QUESTION_WORKER } from './support/question-worker-settings.js';
import { slowReasoner } from './support/slow-reasoner.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const workerScript = fileURLToPath(new URL('./support/question-worker.ts', import.meta.url));

const nats = await startNats();
/** Where a hop-reasoner whose traces no test reads stores them. */
const discardedTraces: KeyValueStore = {
  put: async () => undefined,
  get: async () => undefined,
  putUnless: async () => true,
};
afterAll(() => nats[Symbol.asyncDispose]());

describe.skipIf(!nats.url)('system - hop-reasoners over NATS: a question outlives the one running it', () => {
  let cleanup: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const step of cleanup.reverse()) await step();
    cleanup = [];
  });
  const connect = async (name: string): Promise<Bus> => {
    const bus = await connectNatsBus({ url: nats.url ?? '', name, onError: () => {} });
    cleanup.push(() => bus.drain());
    return bus;
  };
  /** The question jobs of a hop-reasoner in this process, answering with the slow reasoner. */
  const survivor = async (traces: KeyValueStore = discardedTraces) => {
    const bus = await connect('survivor');
    const started: string[] = [];
    /** Questions whose reasoning its signal stopped. */
    const stopped: string[] = [];
    const reasoner = slowReasoner(QUESTION_WORKER.reasoner);
    const jobs = await startQuestionJobs({
      ...(await openQuestionStreams(bus)),
      reasoner: {
        answer: async (ask, options) => {
          const questionId = ask.ctx?.questionId ?? '';
          started.push(questionId);
          try {
            return await reasoner.answer(ask, options);
          } catch (error) {
            if (options.signal?.aborted) stopped.push(questionId);
            throw error;
          }
        },
      },
      traces,
      logger: createLogger('survivor', { level: 'silent' }),
      metrics: createMetrics('survivor', { defaultMetrics: false }),
      capacity: QUESTION_WORKER.capacity,
      leaseMs: QUESTION_WORKER.leaseMs,
    });
    cleanup.push(() => jobs.stop());
    return { started, stopped };
  };

  /** A gateway in this process, and a hop-reasoner's question jobs in a process of their own. */
  const gatewayAndWorkerProcess = async () => {
    const keys = testKeys();
    const { gateway, baseUrl } = await startGatewayOn(await connect('answer-gateway'), keys, {
      config: { RATE_BURST_PER_KEY: 100 },
    });
    cleanup.push(() => gateway.stop({ graceMs: 0 }));
    const logs = { output: '' };
    const worker = spawn(
      process.execPath,
      ['--conditions=@hopline/source', '--import', 'tsx', workerScript, nats.url ?? ''],
      { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    cleanup.push(async () => {
      worker.kill('SIGCONT');
      worker.kill('SIGKILL');
      await exited;
    });
    worker.stdout.on('data', (chunk: Buffer) => (logs.output += chunk.toString()));
    worker.stderr.on('data', (chunk: Buffer) => (logs.output += chunk.toString()));
    await waitFor(() => logs.output.includes('ready'), {
      timeoutMs: 30_000,
      description: `the worker process: ${logs.output}`,
    });
    return { keys, baseUrl, worker, exited, logs };
  };

  it('kill -9 of the hop-reasoner running 20 questions: another restarts each one visibly, and all 20 are answered without a gap', async () => {
    const { keys, baseUrl, worker, exited } = await gatewayAndWorkerProcess();

    const streams = await Promise.all(
      Array.from({ length: 20 }, (_, i) => askSse(baseUrl, keys.alice, { question: `Question ${i}?` })),
    );
    // Every question is the worker's and under way: accepted, route, a token.
    await waitFor(() => streams.every((stream) => stream.events.length >= 3), { timeoutMs: 10_000 });
    const other = await survivor();
    worker.kill('SIGKILL');
    await exited;

    await Promise.all(streams.map((stream) => stream.ended));
    expect(other.started).toHaveLength(20);
    for (const stream of streams) {
      const events = stream.events;
      expect(events.map((event) => event.id)).toEqual(events.map((_, index) => index + 1));
      expect(events.filter((event) => event.name === 'done' || event.name === 'error').map((e) => e.name)).toEqual([
        'done',
      ]);
      const restart = events.findIndex((event) => event.name === 'restarted');
      expect(restart).toBeGreaterThan(0);
      expect(events[restart]?.data).toMatchObject({ attempt: 2, reason: expect.stringMatching(/stopped/) as unknown });
      expect(events.slice(0, restart).every((event) => event.data.attempt === 1)).toBe(true);
      expect(events.slice(restart).every((event) => event.data.attempt === 2)).toBe(true);
      expect(events.slice(restart + 1).map((event) => event.name)[0]).toBe('route');
    }
  }, 90_000);

  it('SIGSTOP of the hop-reasoner past its lease, SIGCONT once another finished the question: the woken one does not put its older trace back', async () => {
    const { keys, baseUrl, worker, logs } = await gatewayAndWorkerProcess();
    const stream = await askSse(baseUrl, keys.alice, { question: 'Which trace stays?' });
    // Paused with its first round's trace still to be stored (most of a lease after the round).
    await waitFor(() => stream.events.some((event) => event.name === 'hop_answer'), { timeoutMs: 10_000 });
    worker.kill('SIGSTOP');
    const questionId = String(stream.events[0]?.data.questionId);
    const traces = await (await connect('trace-reader')).keyValue();
    await survivor(traces);
    await stream.ended;
    expect(stream.events.filter((event) => event.name === 'done')).toHaveLength(1);
    const complete = await traces.get(questionId);
    expect(complete && codecs.reasoningTrace.decode(complete)).toMatchObject({ attempt: 2, stopReason: 'SUFFICIENT' });

    // Woken, the first attempt's round trace comes due before it learns the question moved on.
    worker.kill('SIGCONT');
    const after: ReasoningTrace__Output[] = [];
    const watch = await traces.watch(questionId, (value) => value && after.push(codecs.reasoningTrace.decode(value)));
    cleanup.push(async () => watch.stop());
    await waitFor(() => logs.output.includes('a later attempt stored its own') || after.length > 1, {
      timeoutMs: 10_000,
      description: 'the woken hop-reasoner trying to store its trace',
    });
    expect(after.map((trace) => [trace.attempt, trace.stopReason])).toEqual([[2, 'SUFFICIENT']]);
    expect(codecs.reasoningTrace.decode((await traces.get(questionId)) as Uint8Array)).toMatchObject({ attempt: 2 });
  }, 60_000);

  it('a question whose end was requested before any hop-reasoner took it (a cancel while queued) is not answered: reasoning started ahead of its accepted, if any, stops unheard, and that end follows its accepted', async () => {
    const bus = await connect('gateway-side');
    const { queue, log, ends } = await openQuestionStreams(bus);
    const cancelled = randomUUID();
    const scope = { tenantId: 'acme', userId: 'u', kbIds: ['kb'] };
    const deadlineUnixMs = Date.now() + 30_000;
    await queue.enqueue({ ctx: { questionId: cancelled, scope, deadlineUnixMs }, question: 'Who?', maxHops: 1 });
    await ends.request(cancelled, 'client_request', Date.now() + 5_000);
    const later = randomUUID();
    await queue.enqueue({ ctx: { questionId: later, scope, deadlineUnixMs }, question: 'Who?', maxHops: 1 });

    const other = await survivor();
    // The job behind it is run, so the cancelled one was taken, and its reasoning (started in
    // the turn after the first write of a first delivery, where the end was not known by then)
    // stopped.
    await waitFor(() => other.started.includes(later), { timeoutMs: 10_000 });
    await waitFor(() => other.stopped.length === other.started.length - 1, { timeoutMs: 10_000 });
    expect(other.stopped).not.toContain(later);
    const head = await waitFor(async () => {
      const latest = await log.head(cancelled);
      return latest?.event.event === 'error' ? latest : undefined;
    });
    expect(head).toMatchObject({ event: { seq: 2, attempt: 1, error: { code: 'cancelled' } } });
  });
});
