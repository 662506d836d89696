import type { EventBody, QuestionWriter } from './question-log.js';

/**
 * A writer's events, written without making their sender wait for each acknowledgement. Events
 * queue behind the write in flight and go out one at a time, in the order they were pushed, each
 * naming the stream sequence of the one before: the log stays one gap-free sequence, and a
 * writer that lost the question still finds out (ConflictError) at its next write. Token events
 * that queue up behind the same write go out as one token event with their texts joined, so a
 * streamed answer costs as many writes as the log's round trips allow rather than one per token.
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
      for (let next = this.pending.shift(); next !== undefined; next = this.pending.shift()) {
        await this.writer.append(next, this.retryUntilUnixMs);
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
