import { setImmediate as nextTurn } from 'node:timers/promises';
import type { DurableConsumer, KeyValueStore, Settlement, StreamMessage } from '@hopline/bus';
import {
  CancelledError,
  codecs,
  HoplineError,
  isConflict,
  isTerminal,
  requireRequestContext,
  toHoplineError,
  UnavailableError,
  type AskCommand__Output,
  type ErrorEvent,
  type ReasoningTrace,
  type ValidRequestContext,
} from '@hopline/contracts';
import {
  endError,
  EventPipeline,
  type EventBody,
  type QuestionEnds,
  type QuestionLog,
  type QuestionMeta,
  type QuestionQueue,
  type QuestionWriter,
} from '@hopline/questions';
import type { HoplineMetrics, Logger } from '@hopline/telemetry';
import { trace } from '@opentelemetry/api';
import type { AnswerOutcome, HopReasoner } from '@hopline/reasoning';
import { hopTimer } from './hop-timer.js';
import { PartialTrace } from './partial-trace.js';

// Stops following a question's end requests once its job is over. Nobody reads the reason; given
// one, abort() builds no DOMException (and its stack) per question.
const JOB_OVER = new CancelledError('the question job is over');

export interface QuestionJobsDeps {
  queue: QuestionQueue;
  log: QuestionLog;
  /** The gateways' requests to end questions, which the hop-reasoner turns into their ends. */
  ends: QuestionEnds;
  reasoner: HopReasoner;
  traces: KeyValueStore;
  logger: Pick<Logger, 'info' | 'warn' | 'error'>;
  metrics: Pick<HoplineMetrics, 'stopReasons' | 'hopsPerQuestion' | 'hopDuration'>;
  /** Questions this instance runs at once. */
  capacity: number;
  /** How long a question stays with this instance once it stops marking progress. */
  leaseMs: number;
  /**
   * How long a round's trace waits before it is stored, for a later round's or the complete
   * trace to take its place: a question that ends sooner stores one trace, not one per round. A
   * question whose hop-reasoner dies loses at most this much of its replay. By default a third
   * of the lease, how often a running question marks its progress.
   */
  roundTraceDelayMs?: number;
}

export interface QuestionJobs {
  readonly inFlight: number;
  /** Stops taking questions and hands the running ones back to the queue, where another instance restarts them. */
  stop(): Promise<void>;
}

/** Past its deadline a question's last writes may still be retried this long while NATS is away. */
const WRITE_SLACK_MS = 5_000;
/** A question that failed without a word in its log (NATS away) comes back after this. */
const RETRY_UNWRITTEN_MS = 1_000;
const RESTART_REASON =
  'the hop-reasoner running this question stopped before it finished; another one runs it again from the start';

/** The abort of an attempt whose question a gateway asked to end: the attempt writes that end. */
class EndRequested extends CancelledError {
  constructor(readonly reason: string) {
    super(`the gateway asked to end the question (${reason})`);
  }
}

/**
 * The hop-reasoner's side of a question: it takes question jobs from the queue (no more than
 * its capacity), keeps each alive while it runs, and writes the question's events to its log,
 * which nothing else writes. The first event of every attempt says which it is: `accepted`, or
 * `restarted` when an earlier attempt's events are there (its hop-reasoner died). Every write
 * follows the previous one, so an attempt stops writing as soon as the log moved on without it
 * (another attempt took the question over). A gateway's request to end the question (cancel,
 * deadline, shutdown) stops the attempt at once and becomes the question's terminal event; a
 * question whose end was requested before it was taken (cancelled while queued, or while its
 * hop-reasoner was dead) is not run: its end follows the attempt's first event.
 */
export async function startQuestionJobs(deps: QuestionJobsDeps): Promise<QuestionJobs> {
  const running = new Set<AbortController>();
  let stopping = false;
  const handOver = new HoplineError(
    'unavailable',
    'the hop-reasoner is shutting down; another takes the question over',
  );

  const runJob = async (job: StreamMessage): Promise<Settlement> => {
    let ask: AskCommand__Output;
    let request: ValidRequestContext;
    try {
      ask = codecs.askCommand.decode(job.data);
      request = requireRequestContext(ask.ctx);
    } catch (error) {
      deps.logger.error('malformed question job dropped', { subject: job.subject, error });
      return { kind: 'terminate', reason: 'malformed AskCommand' };
    }
    if (stopping) return { kind: 'retry', delayMs: 0 };
    const { questionId } = request;
    trace.getActiveSpan()?.setAttribute('hopline.question_id', questionId);
    const question = new QuestionAttempt(deps, ask, request, job.deliveryCount);
    running.add(question.abort);
    const holding = new AbortController();
    const requestedBefore = followEndRequests(deps, questionId, question, holding.signal, question.writeUntil);
    try {
      const settlement = await question
        .run(requestedBefore)
        .catch((thrown: unknown) =>
          question.abort.signal.reason === handOver
            ? ({ kind: 'retry', delayMs: 0 } as const)
            : question.settleFailure(thrown),
        );
      // The stream hands a job out no more after its last delivery: one that would come back
      // is ended here, or its log would stay open and its job stored until the stream's limits.
      if (settlement.kind !== 'retry' || job.deliveryCount < deps.queue.maxAttempts) return settlement;
      return await question.giveUp(job.deliveryCount);
    } finally {
      question.over();
      holding.abort(JOB_OVER);
      running.delete(question.abort);
    }
  };

  const consumer: DurableConsumer = await deps.queue.take(
    { capacity: deps.capacity, leaseMs: deps.leaseMs },
    runJob,
    (error, where) => deps.logger.warn('question queue failed', { ...where, error }),
  );

  return {
    get inFlight() {
      return running.size;
    },
    async stop() {
      stopping = true;
      for (const abort of running) abort.abort(handOver);
      await consumer.stop();
    },
  };
}

/**
 * Follows the question's end requests while its job is held. Resolves with the reason of one
 * requested before the job was taken (undefined once the follow caught up without one), which
 * the attempt writes instead of running the question; one requested after that stops the
 * attempt. One follow sees both, so none falls between them, and a question without a request
 * costs no read of the stream (the process's reading of it knows which questions have one).
 * Not caught up by `readByUnixMs` (the attempt's last moment to write), it rejects: a reading
 * that cannot start (NATS up but its stream unreadable) must not hold the job and its slot.
 */
function followEndRequests(
  deps: QuestionJobsDeps,
  questionId: string,
  question: QuestionAttempt,
  signal: AbortSignal,
  readByUnixMs: number,
): Promise<string | undefined> {
  return new Promise((resolveBefore, rejectBefore) => {
    let caughtUp = false;
    const giveUp = setTimeout(
      () => rejectBefore(new UnavailableError(`the end requests of question ${questionId} could not be read in time`)),
      Math.max(0, readByUnixMs - Date.now()),
    );
    signal.addEventListener('abort', () => clearTimeout(giveUp), { once: true });
    const onCaughtUp = () => {
      caughtUp = true;
      clearTimeout(giveUp);
      resolveBefore(undefined);
    };
    void (async () => {
      try {
        for await (const reason of deps.ends.follow(questionId, signal, onCaughtUp)) {
          deps.logger.info('question end requested', { questionId, reason });
          if (caughtUp) question.endRequested(reason);
          else {
            clearTimeout(giveUp);
            resolveBefore(reason);
          }
          return;
        }
      } catch (error) {
        // Only a closed connection ends the reading early; the job comes back to whoever reconnects.
        rejectBefore(error);
        if (!signal.aborted) deps.logger.warn('lost the end requests of a question', { questionId, error });
      }
    })();
  });
}

/** The attempt that stored a trace; 0 for a value that is no trace, which any attempt replaces. */
function storedAttempt(value: Uint8Array): number {
  try {
    return codecs.reasoningTrace.decode(value).attempt;
  } catch {
    return 0;
  }
}

/** One attempt at one question, from taking its job to settling it. */
class QuestionAttempt {
  readonly abort = new AbortController();
  private readonly meta: QuestionMeta;
  /** The attempt's last moment to write: the question's deadline and a slack. */
  readonly writeUntil: number;
  /** The attempt's events after its first: the reasoning does not wait for each to be stored. */
  private events: EventPipeline | undefined;
  /** Whether this attempt's log writes found the log moved on by another: the question is not its own. */
  private lostTheLog = false;
  /** The reasoning trace so far, and its writes, one after the other so the latest is the last stored. */
  private readonly partialTrace: PartialTrace;
  private traceWrites: Promise<void> = Promise.resolve();
  /** The newest trace not yet being written: a write queued behind another stores only the newest. */
  private queuedTrace: (() => ReasoningTrace) | undefined;
  /** The attempt this is, once its first event is stored: its traces carry it. */
  private attempt: number | undefined;
  /** A round's trace waiting to be stored unless a newer one comes first. */
  private roundTrace: NodeJS.Timeout | undefined;
  /**
   * Events the reasoning emitted before the attempt held the question (its first event stored,
   * no end requested before it), in order; undefined once they are written and the rest follow.
   */
  private heldEvents: EventBody[] | undefined = [];
  /**
   * The job is settled. Reasoning that ran ahead of a first write that failed may still be
   * winding down after it: what it emits then is dropped, and schedules no round's trace.
   */
  private settled = false;

  constructor(
    private readonly deps: QuestionJobsDeps,
    private readonly ask: AskCommand__Output,
    private readonly request: ValidRequestContext,
    private readonly delivery: number,
  ) {
    this.meta = {
      tenantId: request.scope.tenantId,
      userId: request.scope.userId,
      kbIds: request.scope.kbIds,
      deadlineUnixMs: request.deadlineUnixMs,
    };
    this.writeUntil = request.deadlineUnixMs + WRITE_SLACK_MS;
    this.partialTrace = new PartialTrace(ask, request, Date.now());
  }

  private get questionId(): string {
    return this.request.questionId;
  }

  /** Stops the attempt, which then writes the end the gateway asked for. */
  endRequested(reason: string): void {
    if (!this.abort.signal.aborted) this.abort.abort(new EndRequested(reason));
  }

  /**
   * `requestedEnd`: the end requested before the job was taken, if any. It is known while the
   * attempt's first event is written, not before: a question found ended is still not run; its
   * end follows that first event.
   */
  async run(requestedEnd: Promise<string | undefined>): Promise<Settlement> {
    const { deps, questionId } = this;
    if (Date.now() >= this.request.deadlineUnixMs) {
      // Past the deadline the question ends either way: an end request that cannot be read in
      // time (a job taken past the write slack leaves no time for a read at all) only changes
      // which end is written, and must not keep it from being written.
      const requested = await requestedEnd.catch(() => undefined);
      await this.begin({
        event: 'error',
        error:
          requested === undefined
            ? {
                code: 'deadline_exceeded',
                message: 'the question waited in the queue past its deadline',
                retryable: true,
              }
            : endError(requested),
      });
      return { kind: 'ack' };
    }
    // A first delivery's reasoning starts while its first event is stored, not after: the
    // question's first hop has a JetStream write less before it. Its events wait in order behind
    // that write, and it stops unheard where the question turns out not to be this attempt's to
    // run (ended before it was taken, or the write failed). It starts in the event loop's next
    // turn: the first event leaves at the end of this one, not behind the reasoning's first
    // turn (the calls it makes), and a streaming client has it that much sooner. A job
    // delivered again reads the log first, and reasons once it holds the question.
    const ahead = new AbortController();
    const beginning = Promise.all([this.begin(), requestedEnd]);
    const reasoningAhead =
      this.delivery === 1
        ? nextTurn().then(() => {
            const signal = AbortSignal.any([this.abort.signal, ahead.signal]);
            signal.throwIfAborted();
            return this.reason(signal);
          })
        : undefined;
    // Its failure is read below, once the question is held; never unhandled before that.
    reasoningAhead?.catch(() => undefined);
    const [writer, requested] = await beginning.catch((error: unknown) => {
      ahead.abort(JOB_OVER);
      throw error;
    });
    if (writer === undefined || requested !== undefined) ahead.abort(JOB_OVER);
    if (writer === undefined) return { kind: 'ack' };
    if (requested !== undefined) return this.end(endError(requested));
    if (writer.attempt > 1) {
      deps.logger.warn('question restarted', { questionId, attempt: writer.attempt, delivery: this.delivery });
    }
    const held = this.heldEvents ?? [];
    this.heldEvents = undefined;
    for (const body of held) this.write(body);
    const { done, trace: reasoning, answered } = await (reasoningAhead ?? this.reason(this.abort.signal));
    // The answer goes out while its complete trace is stored, not after: a client that has the
    // answer and opens the trace at once gets it from the gateway, which waits for the complete
    // trace of a question whose log holds `done`. The job is done once both are stored.
    if (answered !== undefined) this.write(answered);
    this.storeTrace(() => reasoning);
    await Promise.all([(this.events as EventPipeline).flush(), this.traceWrites]);
    // Label values are lower-case, as dashboards and alerts spell them.
    deps.metrics.stopReasons.inc({ reason: done.stopReason.toLowerCase() });
    deps.metrics.hopsPerQuestion.observe({ route: done.route.toLowerCase() }, done.hops);
    return { kind: 'ack' };
  }

  /**
   * The question's reasoning, its events written as they come (held while the attempt's first
   * event is being stored) but for `done`, which is returned: it goes out with the complete trace.
   */
  private async reason(signal: AbortSignal): Promise<AnswerOutcome & { answered?: EventBody }> {
    const observeHop = hopTimer(this.deps.metrics);
    let answered: EventBody | undefined;
    const outcome = await this.deps.reasoner.answer(this.ask, {
      signal,
      emit: (event) => {
        if (this.settled) return;
        observeHop(event);
        if (this.partialTrace.note(event)) this.storeRoundTrace();
        const { questionId: _questionId, atUnixMs: _atUnixMs, ...body } = event;
        if (body.event === 'done') answered = body;
        else if (this.heldEvents !== undefined) this.heldEvents.push(body);
        else this.write(body);
      },
    });
    return { ...outcome, answered };
  }

  /**
   * The attempt's job is settled: a round's trace still waiting is dropped, as the complete or
   * the partial trace is written unless the question went on without it.
   */
  over(): void {
    this.settled = true;
    this.forgetRoundTrace();
  }

  /** A round's trace still waiting is not stored: a newer trace takes its place. */
  private forgetRoundTrace(): void {
    clearTimeout(this.roundTrace);
    this.roundTrace = undefined;
  }

  /** Stores the trace as far as the rounds got, after roundTraceDelayMs, unless a newer trace is stored before. */
  private storeRoundTrace(): void {
    this.roundTrace ??= setTimeout(
      () => this.storeTrace(() => this.partialTrace.current()),
      this.deps.roundTraceDelayMs ?? this.deps.leaseMs / 3,
    );
  }

  /**
   * Stores the trace after the writes before it, in place of a round's trace still waiting.
   * Traces that come while a write is in flight wait as one: only the newest is written (each
   * replaces the one before it, whole), so a fast question does not write a partial trace per
   * hop just before its complete one. A trace that cannot be stored costs the replay, never the
   * answer: the failure is logged, and the reasoning never waits for it.
   */
  private storeTrace(current: () => ReasoningTrace): void {
    const { deps, questionId, attempt } = this;
    this.forgetRoundTrace();
    // An attempt whose first event was never stored is none the log knows of: nothing to replay.
    if (attempt === undefined) return;
    const writeQueued = this.queuedTrace !== undefined;
    this.queuedTrace = current;
    if (writeQueued) return;
    this.traceWrites = this.traceWrites
      .then(async () => {
        const newest = (this.queuedTrace as () => ReasoningTrace)();
        this.queuedTrace = undefined;
        // A later attempt's trace stays: this one may be an attempt that was paused past its
        // lease while another took the question over and finished it.
        const stored = await deps.traces.putUnless(
          questionId,
          codecs.reasoningTrace.encode({ ...newest, attempt }),
          (value) => storedAttempt(value) > attempt,
        );
        if (!stored)
          deps.logger.warn('reasoning trace not stored: a later attempt stored its own', { questionId, attempt });
      })
      .catch((error: unknown) => deps.logger.warn('reasoning trace not stored', { questionId, error }));
  }

  /**
   * Settles an attempt that ended without its answer. One a gateway stopped ends the question
   * as it asked; one that lost the question (another attempt moved the log on under its
   * writes) or was handed over leaves it as it is; one that failed ends it with the error.
   */
  async settleFailure(thrown: unknown): Promise<Settlement> {
    const { deps, questionId } = this;
    const stoppedBy = this.abort.signal.reason;
    if (stoppedBy instanceof EndRequested && !this.lostTheLog) {
      // What the question got as far as stays replayable, marked with the end asked for, and is
      // stored before that end is written: a client that sees the end can open the trace.
      this.partialTrace.endedBy(stoppedBy.reason);
      this.storeTrace(() => this.partialTrace.current());
      await this.traceWrites;
      return this.end(endError(stoppedBy.reason));
    }
    // A conflict from elsewhere (a downstream's ABORTED) is a failure like any other.
    if (this.abort.signal.aborted) return this.leave();
    const error = toHoplineError(thrown);
    deps.logger.error('question failed', { questionId, error });
    // Nothing written, nothing to replay: what reasoning ran ahead of the first write is no
    // attempt the log knows of.
    if (this.events === undefined) return { kind: 'retry', delayMs: RETRY_UNWRITTEN_MS };
    // What the question got as far as stays replayable.
    this.storeTrace(() => this.partialTrace.current());
    await this.traceWrites;
    return this.end({ code: error.code, message: error.message, retryable: error.retryable });
  }

  /**
   * Ends a question whose job was delivered for the last time and would come back: the end is
   * written if it can be (retryable: asking again may find a fleet that can run it), and the
   * job leaves either way.
   */
  async giveUp(deliveries: number): Promise<Settlement> {
    const { deps, questionId } = this;
    deps.logger.error('question given up after its last delivery', { questionId, deliveries });
    const message = `the question could not be run in ${deliveries} attempts; ask again`;
    await this.end({ code: 'unavailable', message, retryable: true });
    return { kind: 'terminate', reason: `not run in ${deliveries} deliveries` };
  }

  /** Writes `error` as the question's terminal event, after the events already sent. */
  private async end(error: ErrorEvent): Promise<Settlement> {
    const { deps, questionId } = this;
    try {
      if (this.events === undefined) {
        await this.begin({ event: 'error', error });
        return { kind: 'ack' };
      }
      // A pipeline that failed reports its failure here.
      await this.events.flush();
      this.events.push({ event: 'error', error });
      await this.events.flush();
      return { kind: 'ack' };
    } catch (writeError) {
      if (isConflict(writeError)) return this.leave();
      deps.logger.error('question could not be ended', { questionId, error: writeError });
      return { kind: 'retry', delayMs: RETRY_UNWRITTEN_MS };
    }
  }

  /**
   * Writes the attempt's first event after whatever the log holds: `accepted` for the first
   * attempt, `restarted` for a later one, or `first` when given. Undefined when the question
   * already ended (cancelled before it was taken, or finished by an attempt that died before
   * it settled its job).
   */
  private async begin(first?: EventBody): Promise<QuestionWriter | undefined> {
    // A job delivered for the first time finds its log empty (nobody else took it): its first
    // write expects that, without a read of the log's head before it, and reads the head only
    // when the write finds the log moved on (as it does for a job a stopping hop-reasoner handed
    // back, which NATS may deliver as a first one again). A job delivered again reads the head first.
    let readHead = this.delivery > 1;
    for (;;) {
      const head = readHead ? await this.deps.log.head(this.questionId) : undefined;
      readHead = true;
      if (head && isTerminal(head.event)) return undefined;
      const attempt = (head?.event.attempt ?? 0) + 1;
      const writer = this.deps.log.writer(this.questionId, this.meta, attempt, head);
      const opening: EventBody =
        first ??
        (attempt === 1
          ? { event: 'accepted', accepted: {} }
          : { event: 'restarted', restarted: { reason: RESTART_REASON } });
      try {
        await writer.append(opening, this.writeUntil);
        this.attempt = attempt;
        // A writer that lost the question stops the reasoning at once, not at its next event.
        this.events = new EventPipeline(writer, this.writeUntil, (error) => {
          if (!isConflict(error)) return;
          this.lostTheLog = true;
          this.abort.abort(error);
        });
        return writer;
      } catch (error) {
        if (!isConflict(error)) throw error;
      }
    }
  }

  /** After an abort the reasoning writes nothing more: the end, if any, is written by `end`. */
  private write(body: EventBody): void {
    if (this.abort.signal.aborted) throw this.abort.signal.reason;
    (this.events as EventPipeline).push(body);
  }

  /** The question is another's now; its job is done if its log ended, else another attempt holds it. */
  private async leave(): Promise<Settlement> {
    const head = await this.deps.log.head(this.questionId).catch(() => undefined);
    return head && isTerminal(head.event) ? { kind: 'ack' } : { kind: 'abandon' };
  }
}
