import type { DurableConsumer, DurableStream } from '@hopline/bus';
import type { HoplineMetrics, Logger } from '@hopline/telemetry';

export interface IngestProgressOptions {
  stream: DurableStream;
  consumer: DurableConsumer;
  /** Labels this worker's lag gauge. */
  workerId: string;
  metrics: Pick<HoplineMetrics, 'ingestLag'>;
  logger: Pick<Logger, 'info' | 'warn'>;
  /** How often the consumer's position is read while catching up, and after. */
  catchUpPollMs?: number;
  pollMs?: number;
}

/**
 * Where this worker's index stands against the ingest stream. It is ready once it has settled
 * everything the stream held when the worker started: only then may it answer retrievals, or
 * an empty index would answer "nothing found". The lag (commands not yet applied) is kept for
 * /healthz, the `hopline_ingest_lag_messages` gauge and the worker's presence.
 */
export class IngestProgress {
  private settled = 0;
  private lagNow: number | undefined;
  private readyNow = false;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private markReady!: () => void;
  /** Resolves once the index has caught up with the stream as it was at start. */
  readonly ready: Promise<void> = new Promise((resolve) => (this.markReady = resolve));

  private constructor(
    private readonly options: IngestProgressOptions,
    private readonly target: number,
  ) {}

  static async start(options: IngestProgressOptions): Promise<IngestProgress> {
    const progress = new IngestProgress(options, await options.stream.lastSequence());
    options.logger.info('catching up with the ingest stream', { through: progress.target });
    await progress.poll();
    return progress;
  }

  get isReady(): boolean {
    return this.readyNow;
  }

  /** Commands in the stream not applied yet; undefined until first read. */
  get lag(): number | undefined {
    return this.lagNow;
  }

  get settledThrough(): number {
    return this.settled;
  }

  /**
   * Whether a command stored on one of these subjects (a scope's kbs) is not applied yet, the
   * stream and the consumer read now: for a retrieval that found nothing. Other kbs' changes,
   * however many, do not count.
   */
  async changesWaitingOn(subjectsOfScope: readonly string[]): Promise<boolean> {
    const newest = await Promise.all(subjectsOfScope.map((subject) => this.options.stream.last(subject)));
    const newestSeq = Math.max(0, ...newest.map((stored) => stored?.seq ?? 0));
    if (this.settled >= newestSeq) return false;
    await this.read();
    return this.settled < newestSeq;
  }

  /** Resolves true once the stream is settled up to `seq`, false when `timeoutMs` passed first. */
  async settledUpTo(seq: number, timeoutMs: number): Promise<boolean> {
    const giveUpAt = Date.now() + timeoutMs;
    for (;;) {
      if (this.settled >= seq) return true;
      await this.read();
      if (this.settled >= seq) return true;
      if (Date.now() >= giveUpAt || this.stopped) return false;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private async read(): Promise<void> {
    const { settledThrough, lag } = await this.options.consumer.progress();
    this.settled = Math.max(this.settled, settledThrough);
    this.lagNow = lag;
    this.options.metrics.ingestLag.set({ worker: this.options.workerId }, lag);
  }

  private async poll(): Promise<void> {
    try {
      await this.read();
      if (!this.readyNow && this.settled >= this.target) {
        this.readyNow = true;
        this.options.logger.info('caught up with the ingest stream', {
          settledThrough: this.settled,
          lag: this.lagNow,
        });
        this.markReady();
      }
    } catch (error) {
      this.options.logger.warn('could not read the ingest consumer position', { error });
    }
    if (this.stopped) return;
    const delay = this.readyNow ? (this.options.pollMs ?? 2_000) : (this.options.catchUpPollMs ?? 200);
    this.timer = setTimeout(() => void this.poll(), delay);
    this.timer.unref();
  }
}
