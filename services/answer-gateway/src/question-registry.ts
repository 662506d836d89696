import type { Subscription } from '@hopline/bus';
import { questionOfReaders, subjects, type QaEvent__Output } from '@hopline/contracts';
import { mayRead, type QuestionReader } from './question-access.js';
import type { CancelReason } from './question-end.js';
import { QuestionRun, type QuestionRunOptions, type QuestionSpec } from './question-run.js';
import { waitUntil } from './wait-until.js';
import { RemoteQuestion, type RemoteQuestionOptions } from './remote-question.js';

export interface QuestionRegistryOptions extends QuestionRunOptions, RemoteQuestionOptions {
  /** Called once per accepted question when it ends. */
  onFinished?: (run: QuestionRun, terminal: QaEvent__Output) => void;
}

/** A question as a resume or a cancel sees it, wherever it was accepted. */
export interface QuestionHandle {
  readonly questionId: string;
  readonly latestSeq: number;
  readonly terminal: QaEvent__Output | undefined;
  read(afterSeq: number, signal: AbortSignal): AsyncGenerator<QaEvent__Output>;
  /** Asks for the question's end now; resolves with whether it was still running. */
  cancel(reason: CancelReason): Promise<boolean>;
  /**
   * Whether its end was due (asked for, or its deadline passed): an event id one past the newest
   * logged one is then that of an end a gateway made, which is in no log.
   */
  endWasDue(): Promise<boolean>;
}

/**
 * The questions this instance accepted, by id. A finished question stays here for the grace
 * window, so that a client that lost its connection just before the end can still read it
 * from memory; questions accepted elsewhere (or forgotten here) are read from their logs.
 */
export class QuestionRegistry {
  private readonly runs = new Map<string, QuestionRun>();
  private readonly evictions = new Set<NodeJS.Timeout>();
  private running = 0;
  private readonly runningByTenant = new Map<string, number>();
  private readonly idleWaiters = new Set<() => void>();
  /**
   * The pings of readers on other replicas, for every question at once: a subscription per
   * question cost the server a SUB and an UNSUB, and the gateway two socket writes, per question,
   * for pings that only a resume through another replica sends. Pings of questions accepted
   * elsewhere find no run here and are dropped.
   */
  private readonly remoteReaders: Subscription;

  constructor(private readonly options: QuestionRegistryOptions) {
    this.remoteReaders = options.bus.subscribe(subjects.readersAll, {}, (message) => {
      const questionId = questionOfReaders(message.subject);
      if (questionId !== undefined) this.runs.get(questionId)?.readElsewhere();
    });
  }

  /** Questions accepted or being accepted that have not ended: what admission control bounds. */
  get inFlight(): number {
    return this.running;
  }

  /** The tenant's questions among `inFlight`. */
  inFlightOf(tenantId: string): number {
    return this.runningByTenant.get(tenantId) ?? 0;
  }

  /**
   * Registers the question (it counts as in flight at once, so concurrent admissions see it)
   * and waits until a hop-reasoner took it. Rejects with the accept runner's error when none did.
   */
  async start(spec: QuestionSpec): Promise<QuestionRun> {
    const run = new QuestionRun(spec, this.options);
    this.runs.set(spec.questionId, run);
    const { tenantId } = spec.scope;
    this.running += 1;
    this.runningByTenant.set(tenantId, this.inFlightOf(tenantId) + 1);
    try {
      await run.start();
    } catch (error) {
      this.runs.delete(spec.questionId);
      this.release(tenantId);
      throw error;
    }
    void run.finished.then((terminal) => {
      this.release(tenantId);
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

  /** The question with this id if `reader` may read it (`mayRead`); another's is not found. */
  async find(questionId: string, reader: QuestionReader): Promise<QuestionHandle | undefined> {
    const run = this.runs.get(questionId);
    if (run === undefined) return RemoteQuestion.open(this.options, questionId, reader);
    return mayRead(reader, run.spec.scope) ? run : undefined;
  }

  /**
   * Asks for the end of every question still running and resolves once each has its end: from
   * its log, or from this gateway when the log did not bring it in time.
   */
  async cancelAll(reason: CancelReason): Promise<void> {
    const running = [...this.runs.values()].filter((run) => run.terminal === undefined);
    await Promise.all(running.map((run) => run.cancel(reason)));
    await Promise.all(running.map((run) => run.finished));
  }

  /** Resolves true once nothing is in flight, or false when `timeoutMs` passed first. */
  whenIdle(timeoutMs: number): Promise<boolean> {
    return waitUntil(() => this.running === 0, this.idleWaiters, timeoutMs);
  }

  /** Forgets finished questions at once, and stops hearing remote readers (shutdown). */
  clear(): void {
    this.remoteReaders.unsubscribe();
    for (const eviction of this.evictions) clearTimeout(eviction);
    this.evictions.clear();
    this.runs.clear();
  }

  private release(tenantId: string): void {
    this.running -= 1;
    const tenantRunning = this.inFlightOf(tenantId) - 1;
    if (tenantRunning === 0) this.runningByTenant.delete(tenantId);
    else this.runningByTenant.set(tenantId, tenantRunning);
    if (this.running === 0) {
      // Each waiter leaves the set as it wakes.
      for (const wake of this.idleWaiters) wake();
    }
  }
}
