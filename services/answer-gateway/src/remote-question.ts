import { isTerminal, subjects, type QaEvent__Output } from '@hopline/contracts';
import type { LogEntry } from '@hopline/questions';
import { endQuestion, unrecordedEnd, type CancelReason, type QuestionChannels } from './question-end.js';

export interface RemoteQuestionOptions extends QuestionChannels {
  /** How long after its end a question can still be read; the gateway that accepted it pings to keep it alive. */
  graceMs: number;
  /** Time past the deadline left to the hop-reasoner's own terminal event before a reader ends the question. */
  deadlineSlackMs: number;
  /** Called when a cancel from here ended the question. */
  onCancelled?: (reason: CancelReason) => void;
}

/**
 * A question this gateway did not accept (a resume or a cancel that reached another replica
 * than the ask did, or one asked here and since forgotten), read straight from its log. Its
 * owner is the one stored with its events. While a reader reads it, this gateway pings the
 * accepting gateway so that it does not cancel the question as abandoned, and ends the
 * question itself should its deadline pass without an end (the accepting gateway may be gone).
 */
export class RemoteQuestion {
  private constructor(
    private readonly options: RemoteQuestionOptions,
    private readonly head: LogEntry,
  ) {}

  /** The question if `owner` asked it and it is still readable; undefined otherwise. */
  static async open(
    options: RemoteQuestionOptions,
    questionId: string,
    owner: { tenantId: string; userId: string },
  ): Promise<RemoteQuestion | undefined> {
    const head = await options.log.head(questionId);
    if (head === undefined || head.meta.tenantId !== owner.tenantId || head.meta.userId !== owner.userId)
      return undefined;
    if (isTerminal(head.event) && Date.now() - head.event.atUnixMs > options.graceMs) return undefined;
    return new RemoteQuestion(options, head);
  }

  get questionId(): string {
    return this.head.event.questionId;
  }

  get latestSeq(): number {
    return this.head.event.seq;
  }

  get terminal(): QaEvent__Output | undefined {
    return isTerminal(this.head.event) ? this.head.event : undefined;
  }

  /** The events after `afterSeq`, in order, ending with the terminal one; ends early when `signal` aborts. */
  async *read(afterSeq: number, signal: AbortSignal): AsyncGenerator<QaEvent__Output> {
    const { options, questionId } = this;
    const reading = new AbortController();
    const stopReading = () => reading.abort();
    signal.addEventListener('abort', stopReading, { once: true });
    const ping = () => {
      try {
        options.bus.publish(subjects.readers(questionId), new Uint8Array(0));
      } catch (error) {
        options.onError('could not tell the accepting gateway that a question is read', error);
      }
    };
    ping();
    const pings = setInterval(ping, options.graceMs / 3);
    let unrecorded = false;
    const backstop = setTimeout(
      () =>
        void endQuestion(options, questionId, this.head.meta, 'deadline').catch((error: unknown) => {
          options.onError('could not write the end of a question', error);
          unrecorded = true;
          reading.abort();
        }),
      Math.max(0, this.head.meta.deadlineUnixMs + options.deadlineSlackMs - Date.now()),
    );
    let last = this.head.event;
    try {
      try {
        for await (const event of options.log.follow(questionId, afterSeq, reading.signal)) {
          if (event.seq > last.seq) last = event;
          yield event;
        }
      } catch (error) {
        if (signal.aborted) return;
        options.onError('lost the events of a question', error);
        unrecorded = true;
      }
      if (unrecorded && !signal.aborted) yield unrecordedEnd(questionId, last);
    } finally {
      signal.removeEventListener('abort', stopReading);
      clearInterval(pings);
      clearTimeout(backstop);
    }
  }

  /** Ends the question now; resolves with whether it was still running. */
  async cancel(reason: CancelReason): Promise<boolean> {
    const { written } = await endQuestion(this.options, this.questionId, this.head.meta, reason);
    if (written) this.options.onCancelled?.(reason);
    return written;
  }
}
