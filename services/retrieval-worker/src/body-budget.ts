/**
 * The bytes of document bodies a worker holds at once: each command's body is read back and
 * joined before its batch is applied, and a batch of `INGEST_BATCH_SIZE` commands of 50 MiB
 * documents would hold gigabytes. A body that does not fit waits, in order, until bodies before
 * it are released; one larger than the whole budget is read once it holds the budget alone.
 */
export class BodyBudget {
  private held = 0;
  private readonly waiting: Array<{ bytes: number; start: () => void }> = [];

  constructor(private readonly maxBytes: number) {}

  /** Resolves once `bytes` may be held, with the release to call when they are no longer. */
  take(bytes: number): Promise<() => void> {
    return new Promise((resolve) => {
      this.waiting.push({ bytes, start: () => resolve(this.hold(bytes)) });
      this.admit();
    });
  }

  private admit(): void {
    for (let next = this.waiting[0]; next !== undefined; next = this.waiting[0]) {
      if (this.held > 0 && this.held + next.bytes > this.maxBytes) return;
      this.waiting.shift();
      next.start();
    }
  }

  private hold(bytes: number): () => void {
    this.held += bytes;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.held -= bytes;
      this.admit();
    };
  }
}
