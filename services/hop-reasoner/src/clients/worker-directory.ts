import type { Bus, Subscription } from '@hopline/bus';
import { codecs, subjects } from '@hopline/contracts';

/** A retrieval worker that said recently that it is ready, and its own subject. */
export interface KnownWorker {
  workerId: string;
  subject: string;
}

interface Entry extends KnownWorker {
  seenAt: number;
  inFlight: number;
  /** Until then it is picked only when no other worker is left: it lost a hedge by not answering. */
  avoidUntil: number;
}

export interface WorkerDirectoryOptions {
  /** A worker that has not announced itself for this long is taken for gone (stopped, frozen, partitioned). */
  expiryMs?: number;
  now?: () => number;
}

/**
 * The retrieval workers a hop-reasoner may address one by one, learned from their presence
 * announcements. A NATS queue group picks a member at random, so only a worker's own subject
 * can send a retry or hedge to a different worker than the first attempt; a worker that stops
 * announcing (a frozen process) drops out within `expiryMs`.
 */
export class WorkerDirectory {
  private readonly workers = new Map<string, Entry>();
  private readonly now: () => number;
  private readonly expiryMs: number;
  private subscription: Subscription | undefined;
  private readonly hearers = new Set<() => void>();

  private constructor(options: WorkerDirectoryOptions) {
    this.now = options.now ?? Date.now;
    this.expiryMs = options.expiryMs ?? 3_500;
  }

  static async start(bus: Bus, options: WorkerDirectoryOptions = {}): Promise<WorkerDirectory> {
    const directory = new WorkerDirectory(options);
    directory.subscription = bus.subscribe(subjects.retrievalPresence, {}, (message) => {
      directory.heard(codecs.workerPresence.decode(message.data));
    });
    await bus.flush();
    return directory;
  }

  /**
   * The live worker to send the next attempt to, leaving out those already tried: one not
   * avoided, with the fewest of this directory's calls in flight, the tie broken at random.
   * Undefined when none is left: the caller falls back to the queue group.
   */
  pick(exclude: readonly string[]): KnownWorker | undefined {
    const now = this.now();
    const candidates = [...this.workers.values()].filter(
      (worker) => now - worker.seenAt <= this.expiryMs && !exclude.includes(worker.workerId),
    );
    const rank = (worker: Entry) => [worker.avoidUntil > now ? 1 : 0, worker.inFlight] as const;
    let best: Entry[] = [];
    for (const worker of candidates) {
      const [avoided, load] = rank(worker);
      const first = best[0];
      const [bestAvoided, bestLoad] = first ? rank(first) : [Infinity, Infinity];
      if (avoided < bestAvoided || (avoided === bestAvoided && load < bestLoad)) best = [worker];
      else if (avoided === bestAvoided && load === bestLoad) best.push(worker);
    }
    const chosen = best[Math.floor(Math.random() * best.length)];
    return chosen && { workerId: chosen.workerId, subject: chosen.subject };
  }

  /** Counts a call in flight to the worker until the returned function is called. */
  begin(workerId: string): () => void {
    const entry = this.workers.get(workerId);
    if (!entry) return () => undefined;
    entry.inFlight += 1;
    return () => {
      entry.inFlight -= 1;
    };
  }

  /** Sends no work to the worker for a while unless no other is left. */
  avoid(workerId: string, forMs: number): void {
    const entry = this.workers.get(workerId);
    if (entry) entry.avoidUntil = this.now() + forMs;
  }

  /** The workers heard from within the expiry, for health details. */
  get live(): string[] {
    const now = this.now();
    return [...this.workers.values()].filter((w) => now - w.seenAt <= this.expiryMs).map((w) => w.workerId);
  }

  /** Calls `listener` on every worker announcement heard, until the returned function is called. */
  onHeard(listener: () => void): () => void {
    this.hearers.add(listener);
    return () => this.hearers.delete(listener);
  }

  stop(): void {
    this.subscription?.unsubscribe();
  }

  private heard(presence: { workerId: string }): void {
    this.hearers.forEach((listener) => listener());
    const entry = this.workers.get(presence.workerId);
    if (entry) {
      entry.seenAt = this.now();
      return;
    }
    let subject: string;
    try {
      // Derived, never taken from the message: an announcement cannot point retrievals elsewhere.
      subject = subjects.retrieveAt(presence.workerId);
    } catch {
      return;
    }
    this.workers.set(presence.workerId, {
      workerId: presence.workerId,
      subject,
      seenAt: this.now(),
      inFlight: 0,
      avoidUntil: 0,
    });
    for (const [workerId, worker] of this.workers) {
      if (this.now() - worker.seenAt > 10 * this.expiryMs) this.workers.delete(workerId);
    }
  }
}
