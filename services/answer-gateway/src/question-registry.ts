import type { Bus } from '@hopline/bus';
import type { QaEvent__Output } from '@hopline/contracts';
import { QuestionRun, type CancelReason, type QuestionSpec } from './question-run.js';

export interface QuestionRegistryOptions {
  bus: Bus;
  sendAsk: (command: Uint8Array, deadlineUnixMs: number) => Promise<void>;
  graceMs: number;
  replayLimit: number;
  deadlineSlackMs: number;
  onError: (message: string, error: unknown) => void;
  /** Called once per accepted question when it ends. */
  onFinished?: (run: QuestionRun, terminal: QaEvent__Output) => void;
}

/**
 * The questions this instance runs, by id. A finished question stays findable for the grace
 * window, so that a client that lost its connection just before the end can still read it.
 */
export class QuestionRegistry {
  private readonly runs = new Map<string, QuestionRun>();
  private readonly evictions = new Set<NodeJS.Timeout>();
  private running = 0;
  private readonly idleWaiters = new Set<() => void>();

  constructor(private readonly options: QuestionRegistryOptions) {}

  /** Questions accepted or being accepted that have not ended: what admission control bounds. */
  get inFlight(): number {
    return this.running;
  }

  /**
   * Registers the question (it counts as in flight at once, so concurrent admissions see it)
   * and asks a hop-reasoner to take it. Rejects with the bus error when none accepts.
   */
  async start(spec: QuestionSpec): Promise<QuestionRun> {
    const run = new QuestionRun(spec, this.options);
    this.runs.set(spec.questionId, run);
    this.running += 1;
    try {
      await run.start();
    } catch (error) {
      this.runs.delete(spec.questionId);
      this.release();
      throw error;
    }
    void run.finished.then((terminal) => {
      this.release();
      this.options.onFinished?.(run, terminal);
      const eviction = setTimeout(() => {
        this.evictions.delete(eviction);
        if (this.runs.get(spec.questionId) === run) this.runs.delete(spec.questionId);
      }, this.options.graceMs);
      eviction.unref();
      this.evictions.add(eviction);
    });
    return run;
  }

  /** The question with this id if `owner` asked it; another owner's question is not found. */
  find(questionId: string, owner: { tenantId: string; userId: string }): QuestionRun | undefined {
    const run = this.runs.get(questionId);
    if (!run || run.spec.scope.tenantId !== owner.tenantId || run.spec.scope.userId !== owner.userId) return undefined;
    return run;
  }

  /** Ends every question still running, telling the hop-reasoners to stop. */
  cancelAll(reason: CancelReason): void {
    for (const run of this.runs.values()) run.cancel(reason);
  }

  /** Resolves true once nothing is in flight, or false when `timeoutMs` passed first. */
  whenIdle(timeoutMs: number): Promise<boolean> {
    if (this.running === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.idleWaiters.delete(wake);
        resolve(false);
      }, timeoutMs);
      const wake = () => {
        clearTimeout(timer);
        resolve(true);
      };
      this.idleWaiters.add(wake);
    });
  }

  /** Forgets finished questions at once (shutdown). */
  clear(): void {
    for (const eviction of this.evictions) clearTimeout(eviction);
    this.evictions.clear();
    this.runs.clear();
  }

  private release(): void {
    this.running -= 1;
    if (this.running === 0) {
      for (const wake of this.idleWaiters) wake();
      this.idleWaiters.clear();
    }
  }
}
