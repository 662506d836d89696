import type { Bus, Subscription } from '@hopline/bus';
import { codecs, subjects } from '@hopline/contracts';

/** A worker that has not announced itself for this long is taken for gone (it announces every second). */
const EXPIRY_MS = 3_500;

export interface WorkerLag {
  workerId: string;
  ingestLag: number;
}

/**
 * How far each live retrieval worker is behind the ingest stream, as the workers announce it
 * in their presence beats: what a kb listing reports beside its counts.
 */
export class WorkerLagBoard {
  private readonly workers = new Map<string, { ingestLag: number; seenAt: number }>();
  private readonly subscription: Subscription;

  constructor(
    bus: Bus,
    private readonly now: () => number = Date.now,
  ) {
    this.subscription = bus.subscribe(subjects.retrievalPresence, {}, (message) => {
      const presence = codecs.workerPresence.decode(message.data);
      if (presence.workerId) this.workers.set(presence.workerId, { ingestLag: presence.ingestLag, seenAt: this.now() });
    });
  }

  /** The live workers, by id. */
  live(): WorkerLag[] {
    const now = this.now();
    const live: WorkerLag[] = [];
    for (const [workerId, worker] of this.workers) {
      if (now - worker.seenAt > EXPIRY_MS) this.workers.delete(workerId);
      else live.push({ workerId, ingestLag: worker.ingestLag });
    }
    return live.sort((a, b) => a.workerId.localeCompare(b.workerId));
  }

  stop(): void {
    this.subscription.unsubscribe();
  }
}
