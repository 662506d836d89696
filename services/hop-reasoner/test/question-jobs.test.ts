import { randomUUID } from 'node:crypto';
import { createMemoryBroker, type Bus, type KeyValueStore } from '@hopline/bus';
import {
  codecs,
  ConflictError,
  UnavailableError,
  subjects,
  type AskCommand,
  type Done__Output,
  type QaEvent__Output,
  type ReasoningTrace__Output,
} from '@hopline/contracts';
import {
  endError,
  openQuestionStreams,
  questionJobsStream,
  type QuestionEnds,
  type QuestionMeta,
  type QuestionStreams,
} from '@hopline/questions';
import { createLogger, createMetrics } from '@hopline/telemetry';
import { waitFor } from '@hopline/test-support';
import { afterEach, describe, expect, it } from 'vitest';
import type { HopReasoner } from '@hopline/reasoning';
import { startQuestionJobs, type QuestionJobs } from '../src/question-jobs.js';

const logger = createLogger('question-jobs-test', { level: 'silent' });
const metrics = createMetrics('question-jobs-test', { defaultMetrics: false });
const scope = { tenantId: 'acme', userId: 'u', kbIds: ['docs'] };
const meta = (deadlineUnixMs: number): QuestionMeta => ({
  tenantId: 'acme',
  userId: 'u',
  kbIds: ['kb'],
  deadlineUnixMs,
});

const done: Done__Output = {
  answer: 'A [1]',
  citations: [],
  stopReason: 'SUFFICIENT',
  hops: 1,
  timings: null,
  route: 'SINGLE',
  abstained: false,
  degraded: false,
  degradedReasons: [],
  llmCalls: 0,
  tokens: 0,
  cached: false,
};

/** A store whose puts and reads are the test's; a conditional put reads, then puts unless the stored value stays. */
const scriptedTraces = (
  put: (key: string, value: Uint8Array) => Promise<void>,
  get: (key: string) => Promise<Uint8Array | undefined> = async () => undefined,
): KeyValueStore => ({
  put,
  get,
  async putUnless(key, value, keeps) {
    const stored = await get(key);
    if (stored !== undefined && keeps(stored)) return false;
    await put(key, value);
    return true;
  },
});

const memoryTraces = (): KeyValueStore & { store: Map<string, Uint8Array> } => {
  const store = new Map<string, Uint8Array>();
  const traces = scriptedTraces(
    async (key, value) => void store.set(key, value),
    async (key) => store.get(key),
  );
  return Object.assign(traces, { store });
};

/** Traces kept in memory, with the key of every store in order. */
const recordedTraces = () => {
  const store = new Map<string, Uint8Array>();
  const stored: string[] = [];
  const traces = scriptedTraces(
    async (key, value) => {
      stored.push(key);
      store.set(key, value);
    },
    async (key) => store.get(key),
  );
  return { traces, stored };
};

/**
 * A reasoner that sends a route and a token, then waits until the test releases its question
 * (or its signal aborts), then sends done. It records every question it was asked to answer.
 */
function scriptedReasoner() {
  const started: string[] = [];
  /** Questions whose reasoning was stopped by its signal. */
  const stopped: string[] = [];
  const releases = new Map<string, () => void>();
  const reasoner: HopReasoner = {
    async answer(command, options) {
      const questionId = command.ctx?.questionId ?? '';
      started.push(questionId);
      const signal = options.signal as AbortSignal;
      const released = new Promise<void>((resolve) => releases.set(questionId, resolve));
      await options.emit({ questionId, atUnixMs: Date.now(), event: 'route', route: { route: 'SINGLE' } });
      await options.emit({ questionId, atUnixMs: Date.now(), event: 'token', token: { text: 'A' } });
      await Promise.race([released, new Promise((resolve) => signal.addEventListener('abort', resolve))]);
      if (signal.aborted) {
        stopped.push(questionId);
        throw signal.reason;
      }
      await options.emit({ questionId, atUnixMs: Date.now(), event: 'done', done });
      return { done, trace: { questionId, stopReason: 'SUFFICIENT', hops: [] } as unknown as ReasoningTrace__Output };
    },
  };
  return { reasoner, started, stopped, release: (questionId: string) => releases.get(questionId)?.() };
}

const askFor = (questionId: string, deadlineUnixMs = Date.now() + 30_000): AskCommand => ({
  ctx: { questionId, scope, deadlineUnixMs },
  question: 'Who?',
  maxHops: 2,
});

/** Every event of the question, once its log has ended. */
async function eventsOf(streams: QuestionStreams, questionId: string): Promise<QaEvent__Output[]> {
  const events: QaEvent__Output[] = [];
  for await (const event of streams.log.follow(questionId, 0, AbortSignal.timeout(10_000))) events.push(event);
  return events;
}

/**
 * A `beforeAccepted` that refuses the first write of `accepted` as a stream that is away does,
 * at once or `afterMs` later (over NATS a refusal is heard a round trip after the write), and
 * lets the later ones through; `writes` counts them.
 */
function refusingFirstWrite(afterMs = 0) {
  const writes = { count: 0 };
  const beforeAccepted = async () => {
    writes.count += 1;
    if (writes.count > 1) return;
    if (afterMs > 0) await new Promise((resolve) => setTimeout(resolve, afterMs));
    throw new UnavailableError('the event stream is away');
  };
  return { writes, beforeAccepted };
}

/** The log of a question the scripted reasoner answered in one attempt: seq, attempt and event. */
const ANSWERED_IN_ONE_ATTEMPT = ['1:1:accepted', '2:1:route', '3:1:token', '4:1:done'];

const summary = (events: QaEvent__Output[]) => events.map((event) => `${event.seq}:${event.attempt}:${event.event}`);

describe('hop-reasoner question jobs', () => {
  let cleanup: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const step of cleanup.reverse()) await step();
    cleanup = [];
  });

  async function setUp(
    options: {
      capacity?: number;
      traces?: KeyValueStore;
      broker?: ReturnType<typeof createMemoryBroker>;
      reasoner?: HopReasoner;
      roundTraceDelayMs?: number;
      /** Replaces the reasoner's reading of end requests. */
      ends?: (real: QuestionEnds) => QuestionEnds;
      /** Called before each write of `accepted`, which waits for it (and fails where it rejects). */
      beforeAccepted?: () => Promise<void>;
    } = {},
  ) {
    const broker = options.broker ?? createMemoryBroker();
    const bus: Bus = broker.connect();
    const gateway: Bus = broker.connect();
    const streams = await openQuestionStreams(bus);
    const { beforeAccepted } = options;
    if (beforeAccepted) {
      const writer = streams.log.writer.bind(streams.log);
      streams.log.writer = (...args) => {
        const opened = writer(...args);
        const append = opened.append.bind(opened);
        opened.append = async (body, ...rest) => {
          if (body.event === 'accepted') await beforeAccepted();
          return append(body, ...rest);
        };
        return opened;
      };
    }
    const gatewayStreams = await openQuestionStreams(gateway);
    const script = scriptedReasoner();
    const traces = options.traces ?? memoryTraces();
    const jobs: QuestionJobs = await startQuestionJobs({
      ...streams,
      ends: options.ends ? options.ends(streams.ends) : streams.ends,
      reasoner: options.reasoner ?? script.reasoner,
      traces,
      logger,
      metrics,
      capacity: options.capacity ?? 4,
      leaseMs: 30_000,
      // Short, so that the rounds' traces of a question held mid-way are stored at once.
      roundTraceDelayMs: options.roundTraceDelayMs ?? 10,
    });
    let stopped = false;
    const stop = async () => {
      if (stopped) return;
      stopped = true;
      await jobs.stop();
      await bus.drain();
    };
    cleanup.push(async () => {
      for (const questionId of script.started) script.release(questionId);
      await stop();
      await gateway.drain();
    });
    return { broker, bus, gatewayStreams, jobs, script, traces, stop };
  }

  it('question jobs - a taken question is accepted, its events numbered from 1 in attempt 1, its trace stored and its job done', async () => {
    const traces = memoryTraces();
    const { gatewayStreams, jobs, script } = await setUp({ traces });
    const questionId = randomUUID();
    await gatewayStreams.queue.enqueue(askFor(questionId));
    await waitFor(() => script.started.includes(questionId));
    expect(jobs.inFlight).toBe(1);
    script.release(questionId);
    expect(summary(await eventsOf(gatewayStreams, questionId))).toEqual(ANSWERED_IN_ONE_ATTEMPT);
    await waitFor(() => traces.store.has(questionId) && jobs.inFlight === 0);
    // The work queue forgets a job once it is done.
    expect(await gatewayStreams.queue.withdraw(questionId)).toBeUndefined();
  });

  it("question jobs - a trace stored by a later attempt stays: an earlier attempt's, woken after it, is not put over it", async () => {
    const traces = memoryTraces();
    const questionId = randomUUID();
    const later = codecs.reasoningTrace.encode({
      questionId,
      question: 'taken over',
      attempt: 2,
      stopReason: 'SUFFICIENT',
    });
    traces.store.set(questionId, later);
    const { gatewayStreams, jobs, script } = await setUp({ traces });
    await gatewayStreams.queue.enqueue(askFor(questionId));
    await waitFor(() => script.started.includes(questionId));
    script.release(questionId);
    await waitFor(() => jobs.inFlight === 0);
    expect(codecs.reasoningTrace.decode(traces.store.get(questionId) as Uint8Array)).toMatchObject({
      question: 'taken over',
      attempt: 2,
    });
  });

  it('question jobs - a trace is stored with the attempt that stored it', async () => {
    const traces = memoryTraces();
    const { gatewayStreams, jobs, script } = await setUp({ traces });
    const questionId = randomUUID();
    await gatewayStreams.queue.enqueue(askFor(questionId));
    await waitFor(() => script.started.includes(questionId));
    script.release(questionId);
    await waitFor(() => jobs.inFlight === 0 && traces.store.has(questionId));
    expect(codecs.reasoningTrace.decode(traces.store.get(questionId) as Uint8Array).attempt).toBe(1);
  });

  it('question jobs - the answer is written while its complete trace is stored, and the job is done once both are', async () => {
    let storeTrace!: () => void;
    const held = new Promise<void>((resolve) => (storeTrace = resolve));
    const traces = memoryTraces();
    // The complete trace (the scripted reasoner's only one) waits until the test lets it be stored.
    const holding = scriptedTraces(async (key, value) => {
      await held;
      await traces.put(key, value);
    }, traces.get);
    const { gatewayStreams, jobs, script } = await setUp({ traces: holding });
    const questionId = randomUUID();
    await gatewayStreams.queue.enqueue(askFor(questionId));
    await waitFor(() => script.started.includes(questionId));
    script.release(questionId);
    // `done` is in the log before the trace is stored: the answer does not wait for its trace.
    expect((await eventsOf(gatewayStreams, questionId)).at(-1)?.event).toBe('done');
    expect(traces.store.has(questionId)).toBe(false);
    expect(jobs.inFlight).toBe(1);
    storeTrace();
    await waitFor(() => jobs.inFlight === 0);
    expect(codecs.reasoningTrace.decode(traces.store.get(questionId) as Uint8Array).stopReason).toBe('SUFFICIENT');
  });

  it('question jobs - a trace that cannot be stored is logged, and the question still ends with exactly one done', async () => {
    const failing = scriptedTraces(async () => Promise.reject(new Error('bucket unavailable')));
    const { gatewayStreams, script, jobs } = await setUp({ traces: failing });
    const questionId = randomUUID();
    await gatewayStreams.queue.enqueue(askFor(questionId));
    await waitFor(() => script.started.includes(questionId));
    script.release(questionId);
    const events = await eventsOf(gatewayStreams, questionId);
    await waitFor(() => jobs.inFlight === 0);
    expect(events.filter((event) => event.event === 'done' || event.event === 'error')).toHaveLength(1);
  });

  it('question jobs - an end request stops the running question at once, and the hop-reasoner writes the end asked for as its last event', async () => {
    const { gatewayStreams, jobs, script } = await setUp();
    const questionId = randomUUID();
    await gatewayStreams.queue.enqueue(askFor(questionId));
    await waitFor(() => script.started.includes(questionId));
    await waitFor(async () => (await gatewayStreams.log.head(questionId))?.event.seq === 3);
    await gatewayStreams.ends.request(questionId, 'client_request', Date.now() + 1_000);
    await waitFor(() => jobs.inFlight === 0);
    const events = await eventsOf(gatewayStreams, questionId);
    expect(summary(events)).toEqual(['1:1:accepted', '2:1:route', '3:1:token', '4:1:error']);
    expect(events.at(-1)?.error).toEqual(endError('client_request'));
  });

  it("question jobs - a first delivery's reasoning starts while its accepted is stored: what it emits meanwhile follows accepted, in order", async () => {
    let storeAccepted = () => {};
    const acceptedStoredAfter = new Promise<void>((resolve) => (storeAccepted = resolve));
    const { gatewayStreams, script } = await setUp({ beforeAccepted: () => acceptedStoredAfter });
    const questionId = randomUUID();
    await gatewayStreams.queue.enqueue(askFor(questionId));
    // The reasoner has its question, and has emitted its route and a token, before accepted is stored.
    await waitFor(() => script.started.includes(questionId));
    storeAccepted();
    script.release(questionId);
    const events = await eventsOf(gatewayStreams, questionId);
    expect(summary(events)).toEqual(ANSWERED_IN_ONE_ATTEMPT);
  });

  it("question jobs - a first delivery's accepted is on its way before the reasoning's first turn: a streaming client has it sooner", async () => {
    const order: string[] = [];
    const script = scriptedReasoner();
    const recording: HopReasoner = {
      answer: (command, options) => {
        order.push('reasoning');
        return script.reasoner.answer(command, options);
      },
    };
    const { gatewayStreams } = await setUp({
      reasoner: recording,
      beforeAccepted: async () => void order.push('accepted'),
    });
    const questionId = randomUUID();
    await gatewayStreams.queue.enqueue(askFor(questionId));
    await waitFor(() => script.started.includes(questionId));
    script.release(questionId);
    expect(summary(await eventsOf(gatewayStreams, questionId))).toEqual(ANSWERED_IN_ONE_ATTEMPT);
    expect(order).toEqual(['accepted', 'reasoning']);
  });

  it('question jobs - a first write that fails before the next turn leaves the reasoning unstarted, and the job comes back', async () => {
    const { traces, stored } = recordedTraces();
    const { writes, beforeAccepted } = refusingFirstWrite();
    const { gatewayStreams, script } = await setUp({ traces, beforeAccepted });
    const questionId = randomUUID();
    await gatewayStreams.queue.enqueue(askFor(questionId));
    await waitFor(() => writes.count === 2, { timeoutMs: 5_000 });
    await waitFor(() => script.started.includes(questionId));
    // Only the second delivery reasoned: the first never started.
    expect(script.started.filter((id) => id === questionId)).toHaveLength(1);
    expect(script.stopped).not.toContain(questionId);
    script.release(questionId);
    expect(summary(await eventsOf(gatewayStreams, questionId))).toEqual(ANSWERED_IN_ONE_ATTEMPT);
    expect(stored).toEqual([questionId]);
  });

  it('question jobs - a first write that fails stops the reasoning run ahead of it, stores no trace of it, and the job comes back', async () => {
    const { traces, stored } = recordedTraces();
    // Refused a round trip after the write, as over NATS: the reasoning has started by then.
    const { gatewayStreams, script } = await setUp({ traces, beforeAccepted: refusingFirstWrite(20).beforeAccepted });
    const questionId = randomUUID();
    await gatewayStreams.queue.enqueue(askFor(questionId));
    await waitFor(() => script.stopped.includes(questionId));
    expect(stored).toEqual([]);
    // The job comes back, and its next delivery runs the question from the start.
    await waitFor(() => script.started.filter((id) => id === questionId).length === 2, { timeoutMs: 5_000 });
    script.release(questionId);
    const events = await eventsOf(gatewayStreams, questionId);
    expect(summary(events)).toEqual(ANSWERED_IN_ONE_ATTEMPT);
    expect(stored).toEqual([questionId]);
  });

  it('question jobs - what reasoning run ahead of a failed first write emits while it winds down is dropped: it stores no trace', async () => {
    const { traces, stored } = recordedTraces();
    let windingDown = false;
    // Answers a round only once stopped, as a step under way when the abort came would.
    const lateRound: HopReasoner = {
      async answer(command, options) {
        const questionId = command.ctx?.questionId ?? '';
        const signal = options.signal as AbortSignal;
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
        await new Promise((resolve) => setTimeout(resolve, 20));
        await options.emit({
          questionId,
          atUnixMs: Date.now(),
          event: 'hopAnswer',
          hopAnswer: { hop: 1, query: 'Who?', answer: 'Mira Chen', citedChunkIds: [] },
        });
        windingDown = true;
        throw signal.reason;
      },
    };
    const { gatewayStreams } = await setUp({
      traces,
      reasoner: lateRound,
      roundTraceDelayMs: 10,
      beforeAccepted: refusingFirstWrite(20).beforeAccepted,
    });
    await gatewayStreams.queue.enqueue(askFor(randomUUID()));
    await waitFor(() => windingDown);
    // Past the round's trace delay, and before the job comes back (after a second).
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(stored).toEqual([]);
  });

  it('question jobs - a question whose end was requested before any hop-reasoner took it is never answered: reasoning started ahead of its accepted, if any, stops unheard, and that end follows its accepted', async () => {
    const broker = createMemoryBroker();
    const gateway = broker.connect();
    const streams = await openQuestionStreams(gateway);
    const questionId = randomUUID();
    await streams.queue.enqueue(askFor(questionId));
    // The request lands while nobody runs the question: it waits in its stream.
    await streams.ends.request(questionId, 'client_request', Date.now() + 1_000);

    const { script, jobs } = await setUp({ broker });
    const later = randomUUID();
    await streams.queue.enqueue(askFor(later));
    // A question enqueued afterwards is run: the ended one before it was looked at and left.
    await waitFor(() => script.started.includes(later));
    script.release(later);
    await waitFor(() => jobs.inFlight === 0);
    expect(script.stopped).toEqual(script.started.filter((id) => id !== later));
    const events = await eventsOf(streams, questionId);
    expect(summary(events)).toEqual(['1:1:accepted', '2:1:error']);
    expect(events[1]?.error).toEqual(endError('client_request'));
    await gateway.drain();
  });

  it('question jobs - an end requested while the hop-reasoner running the question was gone is written by the one that takes the job next', async () => {
    const broker = createMemoryBroker();
    const gateway = broker.connect();
    const streams = await openQuestionStreams(gateway);
    const questionId = randomUUID();
    const deadline = Date.now() + 30_000;
    // Attempt 1 took the question, wrote two events and died; then the client went away.
    const dead = streams.log.writer(questionId, meta(deadline), 1);
    await dead.append({ event: 'accepted', accepted: {} }, 0);
    await dead.append({ event: 'route', route: { route: 'SINGLE' } }, 0);
    await streams.queue.enqueue(askFor(questionId, deadline));
    await streams.ends.request(questionId, 'client_gone', Date.now() + 1_000);

    const { script, jobs } = await setUp({ broker });
    const events = await eventsOf(streams, questionId);
    expect(summary(events)).toEqual(['1:1:accepted', '2:1:route', '3:2:restarted', '4:2:error']);
    expect(events.at(-1)?.error).toEqual(endError('client_gone'));
    await waitFor(() => jobs.inFlight === 0);
    // Whatever reasoning ran beside the first write stopped, and wrote nothing.
    expect(script.stopped).toEqual(script.started);
    await gateway.drain();
  });

  it('question jobs - never more questions at once than its capacity: the rest wait in the queue for a free slot', async () => {
    const { gatewayStreams, jobs, script } = await setUp({ capacity: 2 });
    const ids = [randomUUID(), randomUUID(), randomUUID()];
    for (const id of ids) await gatewayStreams.queue.enqueue(askFor(id));
    await waitFor(() => script.started.length === 2);
    expect(jobs.inFlight).toBe(2);
    const waiting = ids.find((id) => !script.started.includes(id)) as string;
    expect(await gatewayStreams.log.head(waiting)).toBeUndefined();
    script.release(script.started[0] as string);
    await waitFor(() => script.started.includes(waiting));
    expect(jobs.inFlight).toBe(2);
  });

  it('question jobs - a malformed job is dropped without running anything', async () => {
    const { bus, gatewayStreams, script, jobs } = await setUp();
    const raw = await bus.durableStream(questionJobsStream);
    await raw.publish(subjects.ask('broken'), Uint8Array.from([0xff, 0x01]), { msgId: 'broken' });
    const questionId = randomUUID();
    await gatewayStreams.queue.enqueue(askFor(questionId));
    await waitFor(() => script.started.includes(questionId));
    script.release(questionId);
    await waitFor(() => jobs.inFlight === 0);
    expect(script.started).toEqual([questionId]);
    await waitFor(async () => (await raw.last(subjects.ask('broken'))) === undefined);
  });

  it('question jobs - a question taken after its deadline ends with deadline_exceeded without running', async () => {
    const { gatewayStreams, script } = await setUp();
    const questionId = randomUUID();
    await gatewayStreams.queue.enqueue(askFor(questionId, Date.now() - 1));
    const events = await eventsOf(gatewayStreams, questionId);
    expect(events.map((event) => event.error?.code)).toEqual(['deadline_exceeded']);
    expect(script.started).toEqual([]);
  });

  it('question jobs - a question taken past its deadline and its write slack is still ended, though its end request takes a moment to read', async () => {
    // Over NATS a stored end request is read a round trip after the job is taken.
    const slow = (real: QuestionEnds): QuestionEnds =>
      Object.assign(Object.create(real) as QuestionEnds, {
        follow: (questionId: string, signal: AbortSignal, onCaughtUp?: () => void): AsyncGenerator<string> =>
          (async function* () {
            await new Promise((resolve) => setTimeout(resolve, 5));
            yield* real.follow(questionId, signal, onCaughtUp);
          })(),
      });
    const { gatewayStreams, script } = await setUp({ ends: slow });
    const questionId = randomUUID();
    await gatewayStreams.ends.request(questionId, 'deadline', Date.now() + 5_000);
    // Its hop-reasoner died holding it, and no other had room until after the slack.
    await gatewayStreams.queue.enqueue(askFor(questionId, Date.now() - 6_000));
    const events = await eventsOf(gatewayStreams, questionId);
    expect(events.map((event) => event.error?.code)).toEqual(['deadline_exceeded']);
    expect(script.started).toEqual([]);
  });

  it('question jobs - a job delivered for the last time that would come back again is ended instead: its client hears it, and the job leaves', async () => {
    // Every attempt's first write is refused: each delivery would ask for another.
    const beforeAccepted = () => Promise.reject(new UnavailableError('the event stream is away'));
    const { bus, gatewayStreams } = await setUp({ beforeAccepted });
    const questionId = randomUUID();
    await gatewayStreams.queue.enqueue(askFor(questionId));
    const events = await eventsOf(gatewayStreams, questionId);
    expect(events.map((event) => [event.event, event.error?.code, event.error?.retryable])).toEqual([
      ['error', 'unavailable', true],
    ]);
    expect(events[0]?.error?.message).toMatch(/could not be run in 5 attempts/);
    const raw = await bus.durableStream(questionJobsStream);
    await waitFor(async () => (await raw.last(subjects.ask(questionId))) === undefined);
  });

  it('question jobs - a reading of end requests that never catches up does not hold the job past the last moment it may write', async () => {
    // The stream of end requests cannot be read (NATS up, the stream unreadable): the follow
    // neither yields nor says it caught up.
    const stuck = (real: QuestionEnds): QuestionEnds =>
      Object.assign(Object.create(real) as QuestionEnds, {
        follow: (_questionId: string, signal: AbortSignal): AsyncGenerator<string> =>
          (async function* () {
            await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
            yield* [];
          })(),
      });
    const { gatewayStreams, jobs, script } = await setUp({ ends: stuck });
    const questionId = randomUUID();
    // Taken past its deadline, it may write until the deadline's slack, 5 s after it: ½ s from now.
    await gatewayStreams.queue.enqueue(askFor(questionId, Date.now() - 4_500));
    await waitFor(() => jobs.inFlight === 1);
    await waitFor(() => jobs.inFlight === 0, { timeoutMs: 3_000 });
    expect(script.started).toEqual([]);
  });

  it('question jobs - a question whose earlier attempt died is restarted visibly, its events going on from there, and the earlier attempt can write nothing more', async () => {
    const broker = createMemoryBroker();
    const gateway = broker.connect();
    const streams = await openQuestionStreams(gateway);
    const questionId = randomUUID();
    const deadline = Date.now() + 30_000;
    // Attempt 1 took the question, wrote two events and stopped (its process died).
    const dead = streams.log.writer(questionId, meta(deadline), 1);
    await dead.append({ event: 'accepted', accepted: {} }, 0);
    await dead.append({ event: 'route', route: { route: 'SINGLE' } }, 0);
    await streams.queue.enqueue(askFor(questionId, deadline));

    const { script } = await setUp({ broker });
    await waitFor(() => script.started.includes(questionId));
    script.release(questionId);
    const events = await eventsOf(streams, questionId);
    expect(summary(events)).toEqual([
      '1:1:accepted',
      '2:1:route',
      '3:2:restarted',
      '4:2:route',
      '5:2:token',
      '6:2:done',
    ]);
    expect(events[2]?.restarted?.reason).toMatch(/stopped before it finished/);
    await expect(dead.append({ event: 'token', token: { text: 'zombie' } }, 0)).rejects.toBeInstanceOf(ConflictError);
    await gateway.drain();
  });

  it('question jobs - a stopping hop-reasoner hands its running questions to another, which restarts them', async () => {
    const first = await setUp({ capacity: 1 });
    const questionId = randomUUID();
    await first.gatewayStreams.queue.enqueue(askFor(questionId));
    await waitFor(() => first.script.started.includes(questionId));
    // Its route and token are written (they linger a moment for company) before it stops.
    await waitFor(async () => (await first.gatewayStreams.log.head(questionId))?.event.seq === 3);
    const second = await setUp({ broker: first.broker });
    await first.stop();
    await waitFor(() => second.script.started.includes(questionId));
    second.script.release(questionId);
    expect(summary(await eventsOf(first.gatewayStreams, questionId))).toEqual([
      '1:1:accepted',
      '2:1:route',
      '3:1:token',
      '4:2:restarted',
      '5:2:route',
      '6:2:token',
      '7:2:done',
    ]);
  });

  /**
   * A reasoner that answers its first hop, starts a second, then `ends`: throws, or never
   * finishes, as the question of a hop-reasoner that crashed mid-question never does.
   */
  const oneRoundThen = (ends: 'throws' | 'conflicts' | 'hangs'): HopReasoner => ({
    async answer(command, options) {
      const questionId = command.ctx?.questionId ?? '';
      const at = Date.now();
      await options.emit({ questionId, atUnixMs: at, event: 'route', route: { route: 'ITERATIVE' } });
      await options.emit({
        questionId,
        atUnixMs: at,
        event: 'hopStarted',
        hopStarted: { hop: 1, subQuestion: 'Who owns Atlas?' },
      });
      await options.emit({
        questionId,
        atUnixMs: at,
        event: 'retrieval',
        retrieval: { hop: 1, chunkIds: ['atlas#0'] },
      });
      await options.emit({
        questionId,
        atUnixMs: at,
        event: 'hopAnswer',
        hopAnswer: { hop: 1, query: 'Who owns Atlas?', answer: 'Mira Chen', citedChunkIds: ['atlas#0'] },
      });
      await options.emit({
        questionId,
        atUnixMs: at,
        event: 'hopStarted',
        hopStarted: { hop: 2, subQuestion: 'Mira Chen department' },
      });
      if (ends === 'throws') throw new Error('the model server went away');
      // What a downstream's gRPC ABORTED becomes: a conflict, though not the question log's.
      if (ends === 'conflicts') throw new ConflictError('reranker: ABORTED');
      // Never returns on its own; the test's clean-up stops the hop-reasoner, as the crash would.
      const signal = options.signal as AbortSignal;
      return new Promise<never>((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
    },
  });

  const storedTrace = async (traces: KeyValueStore, questionId: string) =>
    codecs.reasoningTrace.decode((await traces.get(questionId)) as Uint8Array);

  it('question jobs - a question that fails mid-way leaves its reasoning trace as far as it got', async () => {
    const traces = memoryTraces();
    const { gatewayStreams } = await setUp({ traces, reasoner: oneRoundThen('throws') });
    const questionId = randomUUID();
    await gatewayStreams.queue.enqueue(askFor(questionId));
    expect((await eventsOf(gatewayStreams, questionId)).at(-1)?.event).toBe('error');
    await waitFor(() => traces.store.has(questionId));
    const stored = await storedTrace(traces, questionId);
    expect(stored.analysis?.route).toBe('ITERATIVE');
    expect(stored.stopReason).toBe('STOP_REASON_UNSPECIFIED');
    expect(stored.hops.map((hop) => [hop.hop, hop.query, hop.evidenceChunkIds, hop.answer?.answer ?? ''])).toEqual([
      [1, 'Who owns Atlas?', ['atlas#0'], 'Mira Chen'],
      [2, 'Mira Chen department', [], ''],
    ]);
  });

  it("question jobs - a conflict that is not the log's (a downstream's ABORTED) ends the question with its error, as any failure does", async () => {
    const { gatewayStreams, jobs } = await setUp({ reasoner: oneRoundThen('conflicts') });
    const questionId = randomUUID();
    await gatewayStreams.queue.enqueue(askFor(questionId));
    const events = await eventsOf(gatewayStreams, questionId);
    expect(events.at(-1)?.error?.code).toBe('conflict');
    expect(events.map((event) => event.attempt)).toEqual(events.map(() => 1));
    await waitFor(() => jobs.inFlight === 0);
  });

  it.each([
    ['deadline', 'DEADLINE'],
    ['client_request', 'CANCELLED'],
  ] as const)(
    'question jobs - a question a gateway ends (%s) leaves its reasoning trace as far as it got, stopped %s, stored before its end is written',
    async (reason, stopReason) => {
      const traces = memoryTraces();
      const { gatewayStreams } = await setUp({ traces, reasoner: oneRoundThen('hangs') });
      const questionId = randomUUID();
      await gatewayStreams.queue.enqueue(askFor(questionId));
      // The first round's trace is stored while the second hop hangs; the end comes after it.
      await waitFor(async () => (await gatewayStreams.log.head(questionId))?.event.event === 'hopStarted');
      await waitFor(() => traces.store.has(questionId));
      await gatewayStreams.ends.request(questionId, reason, Date.now() + 1_000);
      const events = await eventsOf(gatewayStreams, questionId);
      expect(events.at(-1)?.error).toEqual(endError(reason));
      // Read as soon as the end is in the log: the trace holding the end was stored before it.
      const stored = await storedTrace(traces, questionId);
      expect(stored.stopReason).toBe(stopReason);
      expect(stored.analysis?.route).toBe('ITERATIVE');
      expect(stored.hops.map((hop) => [hop.hop, hop.query, hop.answer?.answer ?? ''])).toEqual([
        [1, 'Who owns Atlas?', 'Mira Chen'],
        [2, 'Mira Chen department', ''],
      ]);
    },
  );

  it('question jobs - the trace as far as the rounds got is stored while the question runs, so a question whose hop-reasoner dies can be replayed up to there', async () => {
    const traces = memoryTraces();
    const { gatewayStreams, jobs } = await setUp({ traces, reasoner: oneRoundThen('hangs') });
    const questionId = randomUUID();
    await gatewayStreams.queue.enqueue(askFor(questionId));
    await waitFor(() => traces.store.has(questionId));
    // Still running: what is stored was written by the round, not by an ending.
    expect(jobs.inFlight).toBe(1);
    const stored = await storedTrace(traces, questionId);
    // Written a moment after the first round ended: the second hop had started by then.
    expect(stored.hops.map((hop) => [hop.hop, hop.answer?.answer])).toEqual([
      [1, 'Mira Chen'],
      [2, undefined],
    ]);
  });

  it('question jobs - traces that come while one is being written are stored as one, the newest, and the complete trace is the last stored', async () => {
    // The first write waits until the question has sent its second round and finished.
    const written: ReasoningTrace__Output[] = [];
    let releaseFirst: () => void = () => undefined;
    const firstHeld = new Promise<void>((resolve) => (releaseFirst = resolve));
    let firstWriteStarted: () => void = () => undefined;
    const writingFirst = new Promise<void>((resolve) => (firstWriteStarted = resolve));
    const traces = scriptedTraces(async (_key, value) => {
      if (written.length === 0) {
        firstWriteStarted();
        await firstHeld;
      }
      written.push(codecs.reasoningTrace.decode(value));
    });
    const round = (hop: number, answer: string) => ({
      event: 'hopAnswer' as const,
      hopAnswer: { hop, query: `hop ${hop}`, answer, citedChunkIds: [] },
    });
    let finished: () => void = () => undefined;
    const reasonerDone = new Promise<void>((resolve) => (finished = resolve));
    const reasoner: HopReasoner = {
      async answer(command, options) {
        const questionId = command.ctx?.questionId ?? '';
        const at = Date.now();
        await options.emit({ questionId, atUnixMs: at, ...round(1, 'Mira Chen') });
        // The second round ends while the first round's trace is being written.
        await writingFirst;
        await options.emit({ questionId, atUnixMs: at, ...round(2, 'Research') });
        await options.emit({ questionId, atUnixMs: at, event: 'done', done });
        finished();
        const trace = { questionId, question: 'complete', stopReason: 'SUFFICIENT', hops: [] };
        return { done, trace: trace as unknown as ReasoningTrace__Output };
      },
    };
    const { gatewayStreams } = await setUp({ traces, reasoner });
    const questionId = randomUUID();
    await gatewayStreams.queue.enqueue(askFor(questionId));
    await reasonerDone;
    releaseFirst();
    expect((await eventsOf(gatewayStreams, questionId)).at(-1)?.event).toBe('done');
    // The first round's trace, then the complete one: the second round's was overtaken while queued.
    expect(written.map((trace) => [trace.question, trace.hops.length])).toEqual([
      ['Who?', 1],
      ['complete', 0],
    ]);
  });

  it("question jobs - a question that ends before its rounds' traces are due stores only its complete trace", async () => {
    const written: ReasoningTrace__Output[] = [];
    const traces = scriptedTraces(async (_key, value) => void written.push(codecs.reasoningTrace.decode(value)));
    const reasoner: HopReasoner = {
      async answer(command, options) {
        const questionId = command.ctx?.questionId ?? '';
        for (const hop of [1, 2]) {
          await options.emit({
            questionId,
            atUnixMs: Date.now(),
            event: 'hopAnswer',
            hopAnswer: { hop, query: `hop ${hop}`, answer: 'x', citedChunkIds: [] },
          });
          // A hop's calls to the other services take a moment.
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
        await options.emit({ questionId, atUnixMs: Date.now(), event: 'done', done });
        const trace = { questionId, question: 'complete', stopReason: 'SUFFICIENT', hops: [] };
        return { done, trace: trace as unknown as ReasoningTrace__Output };
      },
    };
    const { gatewayStreams, jobs } = await setUp({ traces, reasoner, roundTraceDelayMs: 1_000 });
    const questionId = randomUUID();
    await gatewayStreams.queue.enqueue(askFor(questionId));
    expect((await eventsOf(gatewayStreams, questionId)).at(-1)?.event).toBe('done');
    await waitFor(() => jobs.inFlight === 0);
    expect(written.map((trace) => trace.question)).toEqual(['complete']);
  });
});
