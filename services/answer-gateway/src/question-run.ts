import type { Bus, Subscription } from '@hopline/bus';
import { CancelledError, codecs, isTerminal, subjects, type ErrorCode, type QaEvent__Output } from '@hopline/contracts';

export interface QuestionSpec {
  questionId: string;
  question: string;
  scope: { tenantId: string; userId: string; kbIds: string[] };
  maxHops: number;
  deadlineUnixMs: number;
}

/** Why the gateway ended a question before the hop-reasoner did. */
export type CancelReason = 'client_gone' | 'client_request' | 'deadline' | 'shutdown' | 'too_many_events';

const TERMINAL_ERROR: Record<CancelReason, { code: ErrorCode; message: string }> = {
  client_gone: { code: 'cancelled', message: 'no client was connected for longer than the resume grace window' },
  client_request: { code: 'cancelled', message: 'the client cancelled the question' },
  deadline: { code: 'deadline_exceeded', message: 'the question did not finish before its deadline' },
  shutdown: { code: 'unavailable', message: 'the gateway shut down before the question finished; ask again' },
  too_many_events: { code: 'resource_exhausted', message: 'the question produced more events than the gateway keeps' },
};

export interface QuestionRunOptions {
  /** Carries the question's events in and its cancel out. */
  bus: Bus;
  /** Sends the encoded AskCommand and resolves when a hop-reasoner acknowledged it. */
  sendAsk: (command: Uint8Array, deadlineUnixMs: number) => Promise<void>;
  /** How long the question outlives its last reader before it is cancelled. */
  graceMs: number;
  /** Events kept for replay; a question producing more is ended. */
  replayLimit: number;
  /** Time past the deadline left to the hop-reasoner's own terminal event before the gateway ends the question. */
  deadlineSlackMs: number;
  /** Reports failures that have no caller, such as a cancel that could not be published. */
  onError: (message: string, error: unknown) => void;
}

/**
 * One question, from the ask to its terminal event, independent of the connections that
 * read it: every event is kept in a replay buffer so that a client can read from any event id
 * on, reconnect and resume without losing or repeating one. The question is cancelled
 * downstream when no reader is attached for longer than the grace window.
 */
export class QuestionRun {
  private readonly buffer: QaEvent__Output[] = [];
  private lastSeq = 0;
  private terminalEvent: QaEvent__Output | undefined;
  private readers = 0;
  private readonly wakers = new Set<() => void>();
  private graceTimer: NodeJS.Timeout | undefined;
  private deadlineTimer: NodeJS.Timeout | undefined;
  private subscription: Subscription | undefined;
  private accepted = false;
  private resolveFinished!: (terminal: QaEvent__Output) => void;
  /** Resolves with the terminal event, however the question ended. */
  readonly finished: Promise<QaEvent__Output>;
  /** Set when the gateway ended the question itself. */
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
   * Subscribes to the question's events, then hands the ask to `sendAsk`, which resolves once
   * a hop-reasoner acknowledged it: "nobody is running" fails here, fast, instead of at the
   * deadline. Rejects with that error when no hop-reasoner accepts; the run then holds no event.
   */
  async start(): Promise<void> {
    const { bus } = this.options;
    this.subscription = bus.subscribe(subjects.events(this.questionId), {}, (message) => {
      this.receive(codecs.qaEvent.decode(message.data));
    });
    try {
      await this.options.sendAsk(
        codecs.askCommand.encode({
          ctx: { questionId: this.questionId, scope: this.spec.scope, deadlineUnixMs: this.spec.deadlineUnixMs },
          question: this.spec.question,
          maxHops: this.spec.maxHops,
        }),
        this.spec.deadlineUnixMs,
      );
    } catch (error) {
      this.subscription.unsubscribe();
      // A reasoner may have taken the question and lost only its acknowledgement.
      this.publishCancel('the ask was not acknowledged');
      throw error;
    }
    this.accepted = true;
    if (this.terminalEvent) return;
    this.deadlineTimer = setTimeout(
      () => this.cancel('deadline'),
      Math.max(0, this.spec.deadlineUnixMs + this.options.deadlineSlackMs - Date.now()),
    );
    this.deadlineTimer.unref();
    if (this.readers === 0) this.armGraceTimer();
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

  /** Ends the question now: the hop-reasoner is told to stop and readers get a terminal error. */
  cancel(reason: CancelReason): void {
    if (this.terminalEvent) return;
    this.cancelReason = reason;
    this.publishCancel(reason);
    const { code, message } = TERMINAL_ERROR[reason];
    this.append({
      questionId: this.questionId,
      seq: this.lastSeq + 1,
      atUnixMs: Date.now(),
      event: 'error',
      error: { code, message, retryable: code === 'unavailable' || code === 'deadline_exceeded' },
    });
  }

  private receive(event: QaEvent__Output): void {
    // Redelivered or stale events (a seq already seen), other questions' events and anything
    // after the terminal event are dropped, so a reader never sees an event twice.
    if (this.terminalEvent || event.questionId !== this.questionId || event.seq <= this.lastSeq || !event.event) return;
    if (this.buffer.length >= this.options.replayLimit - 1 && !isTerminal(event)) {
      this.cancel('too_many_events');
      return;
    }
    this.append(event);
  }

  private append(event: QaEvent__Output): void {
    this.buffer.push(event);
    this.lastSeq = event.seq;
    if (isTerminal(event)) this.finish(event);
    for (const wake of this.wakers) wake();
  }

  private finish(terminal: QaEvent__Output): void {
    this.terminalEvent = terminal;
    clearTimeout(this.deadlineTimer);
    clearTimeout(this.graceTimer);
    this.subscription?.unsubscribe();
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
    this.graceTimer = setTimeout(() => this.cancel('client_gone'), this.options.graceMs);
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

  private publishCancel(reason: string): void {
    try {
      this.options.bus.publish(
        subjects.cancel(this.questionId),
        codecs.cancelCommand.encode({ questionId: this.questionId, reason }),
      );
    } catch (error) {
      this.options.onError('could not publish the cancel of a question', error);
    }
  }
}
