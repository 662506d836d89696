import type { EventBody, QuestionWriter } from './question-log.js';

// The most events one write stores: a question's events are small, and this keeps a message far
// below the server's payload limit however long the queue grew while NATS was away.
const MAX_EVENTS_PER_WRITE = 64;

/**
 * A writer's events, written without making their sender wait for each acknowledgement. Events
 * queue behind the write in flight and go out in the order they were pushed, each write naming
 * the stream sequence of the one before: the log stays one gap-free sequence, and a writer that
 * lost the question still finds out (ConflictError) at its next write. The events that queue up
 * behind a write (and those pushed in the same turn of the event loop as the first) go out
 * together as one message of the log, token events among them with their texts joined, so a
 * question costs as many writes as the log's round trips allow rather than one per event.
 * After a failed write nothing more is written; `push` and `flush` report that failure.
 */
export class EventPipeline {
  private readonly pending: EventBody[] = [];
  private writing: Promise<void> | undefined;
  private failure: { error: unknown } | undefined;

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
    this.writing ??= this.drain();
  }

  /** Resolves once every event pushed so far is written; rejects with the failure that stopped the writes. */
  async flush(): Promise<void> {
    while (this.writing) await this.writing;
    if (this.failure) throw this.failure.error;
  }

  private async drain(): Promise<void> {
    try {
      // The events pushed in this turn of the event loop join the first write: a reasoning step
      // sends several events between two awaits of its own (a hop's answer and the next hop's
      // start, a synthesis's sentences, its citations and its end), each in a microtask of its
      // own, and one microtask gathered only the first. No timer: nothing waits for time.
      await new Promise<void>((resolve) => setImmediate(resolve));
      while (this.pending.length > 0) {
        await this.writer.appendAll(this.pending.splice(0, MAX_EVENTS_PER_WRITE), this.retryUntilUnixMs);
      }
    } catch (error) {
      this.failure = { error };
      this.pending.length = 0;
      this.onFailure(error);
    } finally {
      this.writing = undefined;
    }
  }
}
