import type { EventBody, QuestionWriter } from './question-log.js';

// The most events one write stores: a question's events are small, and this keeps a message far
// below the server's payload limit however long the queue grew while NATS was away.
const MAX_EVENTS_PER_WRITE = 64;

/**
 * How long an event before the terminal one may wait for the events after it to share its write:
 * short beside what a person watching the hops sees as a stall, long beside the few milliseconds
 * between the events of a question whose reasoning is quick.
 */
export const EVENT_LINGER_MS = 50;

/** The terminal event goes out at once, with those waiting before it: the answer waits for nothing. */
const isLast = (body: EventBody) => body.event === 'done' || body.event === 'error';

/**
 * A writer's events, written without making their sender wait for each acknowledgement. Events
 * queue behind the write in flight and go out in the order they were pushed, each write naming
 * the stream sequence of the one before: the log stays one gap-free sequence, and a writer that
 * lost the question still finds out (ConflictError) at its next write. An event goes out with
 * those after it, as one message of the log, once the terminal event comes or EVENT_LINGER_MS
 * after it was pushed: a quick question's events cost the log one write, not one each, and a
 * slow one's reach its readers no more than EVENT_LINGER_MS late. Token events among them are
 * joined into one. After a failed write nothing more is written; `push` and `flush` report that
 * failure.
 */
export class EventPipeline {
  private readonly pending: EventBody[] = [];
  /** Whether the pending events go out now rather than after lingering. */
  private due = false;
  private lingering: NodeJS.Timeout | undefined;
  private writing: Promise<void> | undefined;
  private failure: { error: unknown } | undefined;
  private discarded = false;

  constructor(
    private readonly writer: QuestionWriter,
    private readonly retryUntilUnixMs: number,
    /** Told of the failure that stopped the writes, once, as it happens. */
    private readonly onFailure: (error: unknown) => void = () => undefined,
  ) {}

  /** Queues the event behind those pushed before it; throws once a write has failed. */
  push(body: EventBody): void {
    if (this.failure) throw this.failure.error;
    const last = this.pending.at(-1);
    if (body.event === 'token' && last?.event === 'token') {
      this.pending[this.pending.length - 1] = {
        event: 'token',
        token: { text: `${last.token?.text ?? ''}${body.token?.text ?? ''}` },
      };
    } else {
      this.pending.push(body);
    }
    if (isLast(body)) this.due = true;
    this.schedule();
  }

  /** Resolves once every event pushed so far is written; rejects with the failure that stopped the writes. */
  async flush(): Promise<void> {
    for (;;) {
      if (this.pending.length > 0) {
        this.due = true;
        this.schedule();
      }
      if (!this.writing) break;
      await this.writing;
    }
    if (this.failure) throw this.failure.error;
  }

  /**
   * Drops the events not yet written and writes nothing more, for a writer whose question went
   * on without it (handed over, lost): what it had not written is superseded.
   */
  discard(): void {
    this.discarded = true;
    clearTimeout(this.lingering);
    this.lingering = undefined;
    this.pending.length = 0;
  }

  /** Starts the writes when the pending events are due, else lets them linger (once). */
  private schedule(): void {
    if (this.writing || this.failure || this.discarded || this.pending.length === 0) return;
    if (this.due) {
      clearTimeout(this.lingering);
      this.lingering = undefined;
      this.writing = this.drain();
      return;
    }
    this.lingering ??= setTimeout(() => {
      this.lingering = undefined;
      this.due = true;
      this.schedule();
    }, EVENT_LINGER_MS);
  }

  private async drain(): Promise<void> {
    try {
      // The events the sender pushes before it next waits join the first write.
      await Promise.resolve();
      while (this.due && this.pending.length > 0) {
        const events = this.pending.splice(0, MAX_EVENTS_PER_WRITE);
        // Events pushed while this write is in flight linger again, unless one of them is due.
        if (this.pending.length === 0) this.due = false;
        await this.writer.appendAll(events, this.retryUntilUnixMs);
      }
    } catch (error) {
      this.failure = { error };
      this.pending.length = 0;
      this.onFailure(error);
    } finally {
      this.writing = undefined;
    }
    this.schedule();
  }
}
