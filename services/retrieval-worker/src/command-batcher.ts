import { toHoplineError, type IngestCommand__Output } from '@hopline/contracts';
import type { IndexAttempt, Indexer } from '@hopline/retrieval';

interface Waiting {
  command: IngestCommand__Output;
  alone: boolean;
  settle: (attempt: IndexAttempt) => void;
}

/**
 * Gathers the commands whose deliveries arrive together (one fetch from the consumer) and
 * applies them as one batch, one batch at a time: commands that arrive while a batch is being
 * applied form the next. Each caller gets its own command's attempt, so each delivery is still
 * settled on its own, and only after the batch that holds it is applied.
 */
export class CommandBatcher {
  private waiting: Waiting[] = [];
  private draining = false;

  constructor(
    private readonly indexer: Pick<Indexer, 'applyAll'>,
    private readonly maxBatch: number,
    private readonly onBatch: (attempts: readonly IndexAttempt[]) => void,
  ) {}

  /** `alone`: the command is applied in a batch of its own (a retry, which may fail again). */
  apply(command: IngestCommand__Output, { alone = false }: { alone?: boolean } = {}): Promise<IndexAttempt> {
    return new Promise((settle) => {
      this.waiting.push({ command, alone, settle });
      if (!this.draining) {
        this.draining = true;
        // The rest of the fetch's deliveries reach `apply` before the batch is taken.
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.waiting.length > 0) {
      const batch = this.takeBatch();
      const attempts = await this.applyAll(batch);
      // A batch is written as one (its chunks embedded together): a command refused for what
      // one of them holds (an embedder that will not take one text) fails all. Those failed for
      // good are applied again one at a time, so that only the command at fault is refused.
      if (batch.length > 1) {
        for (const [i, attempt] of attempts.entries()) {
          if (!attempt.ok && toHoplineError(attempt.error).code === 'invalid_argument')
            attempts[i] = (await this.applyAll([batch[i] as Waiting]))[0] as IndexAttempt;
        }
      }
      this.onBatch(attempts);
      batch.forEach(({ settle }, i) => settle(attempts[i] as IndexAttempt));
    }
    this.draining = false;
  }

  private applyAll(batch: readonly Waiting[]): Promise<IndexAttempt[]> {
    return this.indexer
      .applyAll(batch.map(({ command }) => command))
      .catch((error: unknown) => batch.map((): IndexAttempt => ({ ok: false, error })));
  }

  /** The next batch: the commands waiting in order up to the first to go alone, or that one. */
  private takeBatch(): Waiting[] {
    const alone = this.waiting.findIndex((waiting) => waiting.alone);
    const size = alone === 0 ? 1 : Math.min(this.maxBatch, alone < 0 ? this.waiting.length : alone);
    return this.waiting.splice(0, size);
  }
}
