import { z } from 'zod';
import { gatewayEndpoint } from './command.js';

const kbListSchema = z.object({
  indexLag: z.array(z.object({ workerId: z.string(), ingestLag: z.number().int().nonnegative() })),
});

/** How long a beat of a worker's lag may be older than the poll that read it (workers beat every second). */
const BEAT_AGE_MS = 2_000;

/**
 * How many of the documents a run had accepted are searchable, from the gateway's `GET /v1/kbs`:
 * each retrieval worker's ingest lag (commands stored it has not applied, from its presence
 * beats). Documents accepted before a beat are searchable on every worker once the slowest
 * worker's lag is below what was accepted; the count is a lower bound (other uploads in the
 * stream count in the lag too). Unknown (undefined) while the gateway reports no worker.
 */
export class SearchableWatch {
  private readonly accepted: Array<{ at: number; count: number }> = [{ at: 0, count: 0 }];
  private lastAcceptedAt = 0;
  private polling: Promise<void> | undefined;
  /** The slowest worker's lag, and when the poll that read it started. */
  private lag: { value: number; polledAt: number } | undefined;

  constructor(
    private readonly gateway: URL,
    private readonly apiKey: string,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Records the run's accepted count after a batch was accepted. */
  acceptedNow(count: number): void {
    this.lastAcceptedAt = this.now();
    this.accepted.push({ at: this.lastAcceptedAt, count });
  }

  /** Searchable documents of this run as last polled; undefined while unknown. */
  get searchable(): number | undefined {
    if (!this.lag) return undefined;
    const { value, polledAt } = this.lag;
    // What had been accepted when the beat behind the lag could have been sent.
    const before = this.accepted.findLast((entry) => entry.at <= polledAt - BEAT_AGE_MS)?.count ?? 0;
    const settled = value === 0 && polledAt - this.lastAcceptedAt >= BEAT_AGE_MS;
    const total = this.accepted.at(-1)?.count ?? 0;
    return settled ? total : Math.max(0, before - value);
  }

  /**
   * Starts a poll unless one is running; a failed poll keeps the last value (with the time it
   * was read), a gateway that reports no worker makes it unknown.
   */
  poll(): Promise<void> {
    this.polling ??= this.read().finally(() => (this.polling = undefined));
    return this.polling;
  }

  /**
   * Polls once a second until every accepted document is searchable, or the workers' lag has
   * not shrunk for `patienceMs`, or no poll has read it for `patienceMs`, or no worker reports
   * one. Calls `onPoll` after each poll.
   */
  async untilSearchable(patienceMs: number, onPoll: () => void): Promise<void> {
    const total = this.accepted.at(-1)?.count ?? 0;
    let best = { lag: Number.POSITIVE_INFINITY, at: this.now() };
    let lastRead = { polledAt: this.lag?.polledAt, at: this.now() };
    for (;;) {
      await this.poll();
      onPoll();
      if (!this.lag || this.searchable === total) return;
      const now = this.now();
      if (this.lag.value < best.lag) best = { lag: this.lag.value, at: now };
      if (this.lag.polledAt !== lastRead.polledAt) lastRead = { polledAt: this.lag.polledAt, at: now };
      // A lag of 0 settles within a beat once read again; only a lag that stays above it runs
      // out of patience, and so does any lag while polls fail: one of 0 read within a beat of
      // the last batch would never settle.
      const stalled = this.lag.value > 0 && now - best.at >= patienceMs;
      const unread = now - lastRead.at >= patienceMs;
      if (stalled || unread) return;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  }

  private async read(): Promise<void> {
    const polledAt = this.now();
    try {
      const response = await fetch(gatewayEndpoint(this.gateway, '/v1/kbs'), {
        headers: { Authorization: `Bearer ${this.apiKey}` },
        signal: AbortSignal.timeout(2_000),
      });
      if (!response.ok) return;
      const parsed = kbListSchema.safeParse(await response.json());
      if (!parsed.success) return;
      if (parsed.data.indexLag.length === 0) {
        this.lag = undefined;
        return;
      }
      this.lag = { value: Math.max(...parsed.data.indexLag.map((worker) => worker.ingestLag)), polledAt };
    } catch {
      // The progress bar says "?" until a poll answers; ingestion itself does not depend on it.
    }
  }
}
