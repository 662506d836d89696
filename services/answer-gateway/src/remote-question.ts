import { isTerminal, subjects, type ErrorEvent__Output, type QaEvent__Output } from '@hopline/contracts';
import { endError, type LogEntry } from '@hopline/questions';
import { mayRead, type QuestionReader } from './question-access.js';
import {
  BUS_UNREACHABLE,
  END_DELIVERY_MS,
  overdueEnd,
  requestEnd,
  unloggedEnd,
  type CancelReason,
  type QuestionChannels,
} from './question-end.js';

export interface RemoteQuestionOptions extends QuestionChannels {
  /** How long after its end a question can still be read; the gateway that accepted it pings to keep it alive. */
  graceMs: number;
  /** Time past the deadline left to the hop-reasoner's own terminal event before a reader asks for an end. */
  deadlineSlackMs: number;
  /** Called when a cancel from here asked a running question to end. */
  onCancelled?: (reason: CancelReason) => void;
}

/**
 * A question this gateway did not accept (a resume or a cancel that reached another replica
 * than the ask did, or one asked here and since forgotten), read straight from its log. Its
 * owner and kbs are those stored with its events. While a reader reads it, this gateway pings the
 * accepting gateway so that it does not cancel the question as abandoned, and asks for the
 * question's end should its deadline pass without one (the accepting gateway may be gone);
 * should the log not bring an end even then (no hop-reasoner left to write it), the reader
 * gets one from here, as on the accepting gateway.
 */
export class RemoteQuestion {
  private constructor(
    private readonly options: RemoteQuestionOptions,
    private readonly head: LogEntry,
  ) {}

  /** The question if `reader` may read it (`mayRead`) and it is still readable; undefined otherwise. */
  static async open(
    options: RemoteQuestionOptions,
    questionId: string,
    reader: QuestionReader,
  ): Promise<RemoteQuestion | undefined> {
    const head = await options.log.head(questionId);
    if (head === undefined || !mayRead(reader, head.meta)) return undefined;
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

  /**
   * The events after `afterSeq`, in order, ending with the terminal one; ends early when `signal`
   * aborts. An end is due once the deadline passed or an end was requested (through any
   * replica); from then on, should the log bring nothing for END_DELIVERY_MS while this reader
   * waits on it, the end comes from here. A reader slow to take what the log brings is never
   * cut short for it.
   */
  async *read(afterSeq: number, signal: AbortSignal): AsyncGenerator<QaEvent__Output> {
    const { options, questionId } = this;
    // A client that left while the question was opened: an aborted signal fires no more.
    if (signal.aborted || (this.terminal !== undefined && afterSeq >= this.terminal.seq)) return;
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
    // A question whose log had ended when it was opened is only read back: nobody runs it to
    // keep going, and no end is due (a backstop past its deadline would store a false one).
    const running = this.terminal === undefined;
    if (running) ping();
    const pings = running ? setInterval(ping, options.graceMs / 3) : undefined;
    // Why the reading stopped before the log's end: the bus failed, or the end is overdue.
    let endHere: 'unreachable' | 'overdue' | undefined;
    let endDue: ErrorEvent__Output | undefined;
    let waitingOnLog = false;
    let overdue: NodeJS.Timeout | undefined;
    const armOverdue = () => {
      clearTimeout(overdue);
      if (endDue === undefined || !waitingOnLog) return;
      overdue = setTimeout(() => {
        endHere = 'overdue';
        reading.abort();
      }, END_DELIVERY_MS);
    };
    const backstop = running
      ? setTimeout(
          () => {
            requestEnd(options, questionId, 'deadline').catch((error: unknown) =>
              options.onError('could not ask for the end of a question', error),
            );
            endDue ??= endError('deadline');
            armOverdue();
          },
          Math.max(0, this.head.meta.deadlineUnixMs + options.deadlineSlackMs - Date.now()),
        )
      : undefined;
    // The first end request is the one that counts, whichever replica stored it.
    if (running)
      void (async () => {
        for await (const reason of options.ends.follow(questionId, reading.signal)) {
          endDue = endError(reason);
          armOverdue();
          return;
        }
      })().catch(() => {
        // The reading stopped; an end then comes from the deadline's backstop.
      });
    let lastRead: QaEvent__Output | undefined;
    const events = options.log.follow(questionId, afterSeq, reading.signal)[Symbol.asyncIterator]();
    try {
      try {
        for (;;) {
          waitingOnLog = true;
          armOverdue();
          const next = await events.next();
          waitingOnLog = false;
          clearTimeout(overdue);
          if (next.done) break;
          lastRead = next.value;
          yield next.value;
        }
      } catch (error) {
        if (signal.aborted) return;
        if (endHere === undefined) {
          options.onError('lost the events of a question', error);
          endHere = 'unreachable';
        }
      }
      if (signal.aborted || (lastRead !== undefined && isTerminal(lastRead))) return;
      if (endHere === 'unreachable') yield unloggedEnd(questionId, newer(lastRead, this.head.event), BUS_UNREACHABLE);
      else if (endHere === 'overdue')
        yield await overdueEnd(options, questionId, lastRead, endDue ?? endError('deadline'), this.head.event);
    } finally {
      signal.removeEventListener('abort', stopReading);
      reading.abort();
      // A reader that stopped while an event was handed to it leaves the log's reading paused
      // at that event: it is closed here, or the process's shared reading would keep feeding it.
      await events.return?.(undefined);
      clearInterval(pings);
      clearTimeout(backstop);
      clearTimeout(overdue);
    }
  }

  async endWasDue(): Promise<boolean> {
    if (Date.now() >= this.head.meta.deadlineUnixMs) return true;
    return (await this.options.ends.requested(this.questionId)) !== undefined;
  }

  /**
   * Asks for the question's end now; resolves with whether it was still running when this
   * gateway opened it.
   */
  async cancel(reason: CancelReason): Promise<boolean> {
    if (this.terminal) return false;
    await requestEnd(this.options, this.questionId, reason);
    this.options.onCancelled?.(reason);
    return true;
  }
}

/** The later of two events (by seq), either of which may be missing. */
function newer(a: QaEvent__Output | undefined, b: QaEvent__Output): QaEvent__Output {
  return a !== undefined && a.seq > b.seq ? a : b;
}
