import { CancelledError, isTerminal, type QaEvent__Output } from '@hopline/contracts';
import { endError, isEndFor } from '@hopline/questions';
import {
  BUS_UNREACHABLE,
  END_DELIVERY_MS,
  overdueEnd,
  requestEnd,
  unloggedEnd,
  type CancelReason,
  type QuestionChannels,
} from './question-end.js';

export type { CancelReason } from './question-end.js';

export interface QuestionSpec {
  questionId: string;
  question: string;
  scope: { tenantId: string; userId: string; kbIds: string[]; docIds: string[] };
  maxHops: number;
  deadlineUnixMs: number;
}

/**
 * Runs the acceptance in two steps: `enqueue` stores the question's job (waiting out a
 * cluster's leader election within the question's deadline), then `taken` resolves once a
 * hop-reasoner took it; the runner bounds that wait (the accept timeout, the breaker in front
 * of the hop-reasoners) and aborts its signal when it gives up.
 */
export type AcceptRunner = (
  steps: { enqueue: () => Promise<void>; taken: (signal: AbortSignal) => Promise<void> },
  deadlineUnixMs: number,
) => Promise<void>;

export interface QuestionRunOptions extends QuestionChannels {
  accept: AcceptRunner;
  /** How long the question outlives its last reader before it is cancelled. */
  graceMs: number;
  /** Events kept for replay; a question producing more is ended. */
  replayLimit: number;
  /** Time past the deadline left to the hop-reasoner's own terminal event before the gateway asks for an end. */
  deadlineSlackMs: number;
}

// Stops reading the question's log. Nobody reads the reason; given one, abort() builds no
// DOMException (and its stack) per question.
const STOP_WATCHING = new CancelledError("the gateway stopped reading the question's log");

/**
 * A question this gateway accepted, from the ask to its terminal event, independent of the
 * connections that read it. Its events come from its log (where any gateway can read them
 * too) into a replay buffer that this gateway's readers read from any event id on, so that a
 * client can reconnect and resume without losing or repeating one. Only hop-reasoners write
 * the log: the gateway asks for the question's end when nobody reads it for longer than the
 * grace window (readers on other gateways count: they ping), and at its deadline should the
 * hop-reasoners not end it themselves. Should the log not bring that end in time (no
 * hop-reasoner left, or a read that stalled), its readers get an end from the gateway itself.
 */
export class QuestionRun {
  private readonly buffer: QaEvent__Output[] = [];
  private lastSeq = 0;
  private terminalEvent: QaEvent__Output | undefined;
  private readers = 0;
  private readonly wakers = new Set<() => void>();
  private graceTimer: NodeJS.Timeout | undefined;
  private deadlineTimer: NodeJS.Timeout | undefined;
  private overdueTimer: NodeJS.Timeout | undefined;
  private readonly watching = new AbortController();
  private accepted = false;
  /** The end this gateway asked for. */
  private endRequested: CancelReason | undefined;
  /** Set once an end was asked for, here or through another replica: its readers await it. */
  private endDue = false;
  private firstEventArrived: (() => void) | undefined;
  private resolveFinished!: (terminal: QaEvent__Output) => void;
  /** Resolves with the terminal event, however the question ended. */
  readonly finished: Promise<QaEvent__Output>;
  /** Set once the question ended as the gateway asked. */
  cancelReason: CancelReason | undefined;

  constructor(
    readonly spec: QuestionSpec,
    private readonly options: QuestionRunOptions,
  ) {
    this.finished = new Promise((resolve) => {
      this.resolveFinished = resolve;
    });
  }

  get questionId(): string {
    return this.spec.questionId;
  }

  get terminal(): QaEvent__Output | undefined {
    return this.terminalEvent;
  }

  /** The seq of the newest event received. */
  get latestSeq(): number {
    return this.lastSeq;
  }

  /**
   * Reads the question's log, enqueues the question and waits until a hop-reasoner took it
   * (its first event). Rejects with the accept runner's error when none did, after withdrawing
   * the question (its client hears why from that error, not from the log), unless its first
   * event arrived at the last moment, in which case it is accepted after all.
   */
  async start(): Promise<void> {
    const firstEvent = new Promise<void>((resolve) => (this.firstEventArrived = resolve));
    void this.watch();
    // Set once the job may be in the queue, even if its enqueue has not returned (NATS slow).
    let enqueued = false;
    try {
      await this.options.accept(
        {
          enqueue: async () => {
            enqueued = true;
            await this.options.queue.enqueue(
              {
                ctx: { questionId: this.questionId, scope: this.spec.scope, deadlineUnixMs: this.spec.deadlineUnixMs },
                question: this.spec.question,
                maxHops: this.spec.maxHops,
              },
              this.spec.deadlineUnixMs,
            );
          },
          taken: (signal) =>
            Promise.race([
              firstEvent,
              new Promise<never>((_, reject) => {
                const stop = () => reject(new CancelledError('the wait for a hop-reasoner ended'));
                if (signal.aborted) stop();
                else signal.addEventListener('abort', stop, { once: true });
              }),
            ]),
        },
        this.spec.deadlineUnixMs,
      );
    } catch (error) {
      if (!enqueued || (this.buffer.length === 0 && (await this.giveUp()))) {
        this.watching.abort(STOP_WATCHING);
        throw error;
      }
    }
    this.accepted = true;
    if (this.terminalEvent) return;
    void this.followEnds();
    this.deadlineTimer = setTimeout(
      () => void this.cancel('deadline'),
      Math.max(0, this.spec.deadlineUnixMs + this.options.deadlineSlackMs - Date.now()),
    );
    this.deadlineTimer.unref();
    if (this.readers === 0) this.armGraceTimer();
  }

  /**
   * A gateway replica that did not accept the question streams it to a reader (a resume that
   * reached it): the question is read, so its grace window starts again.
   */
  readElsewhere(): void {
    if (this.accepted && this.readers === 0 && !this.terminalEvent) this.armGraceTimer();
  }

  /**
   * The events after `afterSeq`, in order, ending with the terminal one. Waits for events not
   * yet received; rejects with CancelledError when `signal` aborts. While it runs the reader
   * counts as attached, which keeps the question alive.
   */
  async *read(afterSeq: number, signal: AbortSignal): AsyncGenerator<QaEvent__Output> {
    this.attach();
    try {
      let next = this.buffer.findIndex((event) => event.seq > afterSeq);
      if (next < 0) next = this.buffer.length;
      for (;;) {
        while (next < this.buffer.length) {
          const event = this.buffer[next++] as QaEvent__Output;
          yield event;
          if (isTerminal(event)) return;
        }
        await this.nextChange(signal);
      }
    } finally {
      this.detach();
    }
  }

  /**
   * Asks for the question's end now: the hop-reasoner holding it (or taking it next) stops and
   * writes the reason's error into its log, which its readers here and elsewhere receive. When
   * the request cannot be stored (NATS unreachable) this gateway's readers get an `unavailable`
   * end of their own. Resolves with whether the question was still running.
   */
  async cancel(reason: CancelReason): Promise<boolean> {
    if (this.terminalEvent) return false;
    if (this.endDue) return true;
    this.endDue = true;
    this.endRequested = reason;
    clearTimeout(this.deadlineTimer);
    clearTimeout(this.graceTimer);
    try {
      await requestEnd(this.options, this.questionId, reason);
    } catch (error) {
      this.options.onError('could not ask for the end of a question', error);
      this.append(unloggedEnd(this.questionId, this.buffer.at(-1), BUS_UNREACHABLE));
      return true;
    }
    this.awaitEnd(reason);
    return true;
  }

  async endWasDue(): Promise<boolean> {
    return this.endDue || Date.now() >= this.spec.deadlineUnixMs;
  }

  /**
   * Withdraws a question nobody took: true when it is withdrawn, false when its log shows a
   * hop-reasoner took it after all (its first event has not reached this gateway yet). One that
   * takes the job from now on, before the withdrawal, finds the end request and writes that end
   * instead of running the question.
   */
  private async giveUp(): Promise<boolean> {
    const head = await this.options.log.head(this.questionId).catch((error: unknown) => {
      this.options.onError('could not read whether a hop-reasoner took a question', error);
      return undefined;
    });
    if (head !== undefined) return false;
    await requestEnd(this.options, this.questionId, 'not_taken').catch((error: unknown) =>
      this.options.onError('could not ask for the end of a question nobody took', error),
    );
    await this.options.queue
      .withdraw(this.questionId)
      .catch((error: unknown) => this.options.onError('could not withdraw a question nobody took', error));
    return true;
  }

  /**
   * The end was asked for; its readers normally get it from the log. Should the log not bring
   * it in time, they get an end from here: a stream that may miss events read after a stall, or
   * whose end is in no log, beats one that never ends.
   */
  private awaitEnd(reason: string): void {
    this.overdueTimer = setTimeout(() => {
      if (this.terminalEvent) return;
      void overdueEnd(this.options, this.questionId, this.buffer.at(-1), endError(reason)).then((end) => {
        if (this.terminalEvent) return;
        // Events that came while the log's head was read go before this end, not over it: an
        // end dropped as already seen would leave the question without one for good.
        const ending =
          end.seq > this.lastSeq ? end : unloggedEnd(this.questionId, this.buffer.at(-1), endError(reason));
        this.options.onError(
          'the log of a question did not bring its end in time; its readers get an end from here',
          new Error(`question ${this.questionId}: no end after seq ${this.lastSeq}; ending with seq ${ending.seq}`),
        );
        this.receive(ending);
      });
    }, END_DELIVERY_MS);
    this.overdueTimer.unref();
  }

  /**
   * Follows the question's end requests once it is accepted: a cancel made through another
   * replica ends this gateway's readers, and frees its slot, as one made here does, though no
   * hop-reasoner is left to write it into the log. That replica counts the cancel.
   */
  private async followEnds(): Promise<void> {
    try {
      for await (const reason of this.options.ends.follow(this.questionId, this.watching.signal)) {
        if (this.endDue || this.terminalEvent) return;
        this.endDue = true;
        clearTimeout(this.deadlineTimer);
        clearTimeout(this.graceTimer);
        this.awaitEnd(reason);
        return;
      }
    } catch {
      // The reading stopped: the question ended, or the bus failed, which its log's reading reports.
    }
  }

  /**
   * Follows the question's log from before its job is enqueued (`start` calls it first): the
   * log of the question id just made is empty, so the follow looks for no stored event.
   */
  private async watch(): Promise<void> {
    try {
      const events = this.options.log.follow(this.questionId, 0, this.watching.signal, { onlyNew: true });
      for await (const event of events) this.receive(event);
    } catch (error) {
      if (this.terminalEvent) return;
      this.options.onError('lost the events of a question', error);
      this.append(unloggedEnd(this.questionId, this.buffer.at(-1), BUS_UNREACHABLE));
    }
  }

  private receive(event: QaEvent__Output): void {
    // Events already seen (a writer that broke the log's order), other questions' events and
    // anything after the terminal event are dropped, so a reader never sees an event twice.
    if (this.terminalEvent || event.questionId !== this.questionId || event.seq <= this.lastSeq || !event.event) return;
    this.append(event);
    if (this.buffer.length >= this.options.replayLimit && !isTerminal(event)) void this.cancel('too_many_events');
  }

  private append(event: QaEvent__Output): void {
    this.buffer.push(event);
    this.firstEventArrived?.();
    this.firstEventArrived = undefined;
    this.lastSeq = event.seq;
    if (isTerminal(event)) this.finish(event);
    for (const wake of this.wakers) wake();
  }

  private finish(terminal: QaEvent__Output): void {
    this.terminalEvent = terminal;
    if (this.endRequested && isEndFor(terminal.error, this.endRequested)) this.cancelReason = this.endRequested;
    clearTimeout(this.deadlineTimer);
    clearTimeout(this.graceTimer);
    clearTimeout(this.overdueTimer);
    this.watching.abort(STOP_WATCHING);
    this.resolveFinished(terminal);
  }

  private attach(): void {
    this.readers += 1;
    clearTimeout(this.graceTimer);
    this.graceTimer = undefined;
  }

  private detach(): void {
    this.readers -= 1;
    if (this.readers === 0 && this.accepted && !this.terminalEvent) this.armGraceTimer();
  }

  private armGraceTimer(): void {
    clearTimeout(this.graceTimer);
    this.graceTimer = setTimeout(() => void this.cancel('client_gone'), this.options.graceMs);
    this.graceTimer.unref();
  }

  private nextChange(signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal.aborted) {
        reject(new CancelledError('the reader went away'));
        return;
      }
      const done = (error?: Error) => {
        this.wakers.delete(wake);
        signal.removeEventListener('abort', onAbort);
        if (error) reject(error);
        else resolve();
      };
      const wake = () => done();
      const onAbort = () => done(new CancelledError('the reader went away'));
      this.wakers.add(wake);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}
