import CircuitBreaker from 'opossum';
import {
  BreakerOpenError,
  CancelledError,
  DeadlineExceededError,
  HoplineError,
  isCancelled,
  isInfrastructureError,
  toHoplineError,
} from '@hopline/contracts';
import { BREAKER_STATE_VALUE, type HoplineMetrics, type Logger } from '@hopline/telemetry';
import { hopTimeoutMs, MAX_TIMER_MS } from './deadline.js';
import { abortReason } from './signals.js';

export type BreakerState = 'closed' | 'open' | 'halfOpen';

export interface BreakerOptions {
  /** Share of failed calls in the rolling window above which the breaker opens. */
  errorThresholdPercentage: number;
  /** Calls the window must hold before the share is judged at all. */
  volumeThreshold: number;
  /** How long an open breaker rejects before it lets one trial call through. */
  resetTimeoutMs: number;
  /** Length of the rolling window. */
  rollingCountTimeoutMs: number;
  /** Buckets the window is counted in. Default 10. */
  rollingCountBuckets?: number;
  /**
   * Opens after this many infrastructure failures in a row, whatever the window's share: a
   * downstream that was fine a moment ago and now times out on every call is down, even while
   * its earlier successes keep the share low. Default: only the share counts.
   */
  consecutiveFailures?: number;
}

/**
 * What every Hopline downstream uses unless it has a reason not to: open when half of at
 * least five calls in ten seconds failed, try again after ten seconds.
 */
export const DEFAULT_BREAKER: BreakerOptions = {
  errorThresholdPercentage: 50,
  volumeThreshold: 5,
  resetTimeoutMs: 10_000,
  rollingCountTimeoutMs: 10_000,
};

export interface GuardOptions {
  /** The dependency this guard protects: a breaker name, a metric label, a log field. */
  downstream: string;
  breaker: BreakerOptions;
  /** Bulkhead: calls allowed in flight at once; further calls are rejected. Default unbounded. */
  maxConcurrent?: number;
  logger?: Pick<Logger, 'info' | 'warn'>;
  metrics?: Pick<HoplineMetrics, 'breakerState' | 'breakerTransitions' | 'breakerFailures'>;
}

export interface GuardCallOptions {
  /** The question's absolute deadline (ms since the Unix epoch). */
  deadlineUnixMs: number;
  /** This call's own limit; the call gets min(cap, what is left of the deadline). */
  capMs?: number;
  /** The caller's signal: aborting it cancels the call. */
  signal?: AbortSignal;
}

export interface GuardStats {
  downstream: string;
  state: BreakerState;
  /** Every call made, including those that never reached the downstream. */
  calls: number;
  successes: number;
  /** Infrastructure failures: the ones that count towards opening (timeouts included). */
  failures: number;
  /** Timeouts of this guard's own per-call timer. */
  timeouts: number;
  /** Errors about the request or relayed from further down: passed on, not counted. */
  ignoredErrors: number;
  /** Calls the caller cancelled. */
  cancelled: number;
  /** Calls rejected at once: breaker open or bulkhead full. */
  rejected: number;
  /** Calls that never started: no time left, or already cancelled. */
  skipped: number;
}

export type StateListener = (state: BreakerState, downstream: string) => void;

/** What the work is told about the call it makes. */
export interface Attempt {
  /**
   * The half-open breaker's one trial call. It should wait, within its timeout, for a
   * connection that is still being made (gRPC `waitForReady`) rather than fail fast: a trial
   * that fails on a dependency that is just coming back keeps the breaker open for another
   * reset period.
   */
  trial: boolean;
}

export interface Guard {
  readonly downstream: string;
  readonly state: BreakerState;
  /**
   * Runs `work` under the breaker with its own AbortSignal, which aborts on this call's
   * timeout (DeadlineExceededError, also when the caller's signal aborts at or after the
   * call's deadline), on the caller's signal (CancelledError) or on breaker rejection
   * (BreakerOpenError); the call rejects with the same error.
   */
  call<T>(work: (signal: AbortSignal, attempt: Attempt) => Promise<T>, options: GuardCallOptions): Promise<T>;
  stats(): GuardStats;
  /** Calls `listener` on every state change; returns the unsubscribe function. */
  onStateChange(listener: StateListener): () => void;
  /**
   * Closes the breaker now, without waiting out its reset period: for a caller that knows the
   * failures that opened it were not the downstream's (the bus between them was down).
   */
  close(): void;
  /** Stops the breaker's timers; later calls are rejected. */
  shutdown(): void;
}

type Work = (signal: AbortSignal, attempt: Attempt) => Promise<unknown>;

/** One call as the breaker runs it: the work, the signal the guard aborts, and how to give up on the work early. */
interface GuardedCall {
  readonly work: Work;
  readonly controller: AbortController;
  readonly attempt: Attempt;
  /** Settles the call with the abort's reason, whatever the work does after; set once the work runs. */
  giveUp?: (reason: HoplineError) => void;
  /** Rejects the caller's promise with a cancellation the breaker is never told of; set as the call is fired. */
  cancel?: (reason: HoplineError) => void;
}

const OPOSSUM_OPEN = 'EOPENBREAKER';
const OPOSSUM_SHUTDOWN = 'ESHUTDOWN';

/**
 * The breaker's action: the work, with every failure a HoplineError, given up on as soon as the
 * guard aborts it, so that work which ignores its signal cannot hold the caller past its
 * deadline. Only the guard aborts the call's signal, and it gives up on the work as it does: no
 * listener on that signal, whose adding and removing cost more than the rest of a guard's call.
 *
 * A call its caller cancelled says nothing about the downstream, and the breaker is not told of
 * it: opossum knows only successes and failures, and takes an error its filter lets pass for a
 * success, which closes a half-open breaker, so a call started before the breaker opened and
 * cancelled while it is half-open would close it without a trial. The caller's promise is
 * rejected directly, and the breaker's never settles: it is collected with the call, and the
 * slot it holds in opossum's semaphore is one of an unbounded number. The half-open trial is
 * the exception: the breaker lets no other call through until it hears of it, so a cancelled
 * trial counts as a failure, and the breaker waits another reset period for a trial that proves
 * something.
 */
async function runAttempt(call: GuardedCall): Promise<unknown> {
  const { signal } = call.controller;
  try {
    if (signal.aborted) throw abortReason(signal);
    return await new Promise<unknown>((resolve, reject) => {
      call.giveUp = reject;
      call.work(signal, call.attempt).then(resolve, reject);
    });
  } catch (error) {
    // Work that gave up because its signal aborted reports its own AbortError; the reason is the truth.
    const failure = signal.aborted ? abortReason(signal) : toHoplineError(error);
    if (!signal.aborted || !isCancelled(failure) || call.attempt.trial) throw failure;
    call.cancel?.(failure);
    return new Promise<never>(() => undefined);
  }
}

/**
 * One circuit breaker for one downstream, with a per-call deadline and AbortSignal. Opossum's
 * shared timeout and abortController are off: each call's timeout derives from its own
 * question's deadline, and aborting one call must not abort its neighbours.
 */
export function createGuard(options: GuardOptions): Guard {
  const { downstream, logger, metrics } = options;
  const breaker = new CircuitBreaker<[GuardedCall], unknown>(runAttempt, {
    name: downstream,
    timeout: false,
    // Only the counts decide; latency percentiles (a sort of the window's latencies) and the
    // snapshot they feed once a second per breaker are read by nobody.
    rollingPercentilesEnabled: false,
    enableSnapshots: false,
    errorThresholdPercentage: options.breaker.errorThresholdPercentage,
    volumeThreshold: options.breaker.volumeThreshold,
    resetTimeout: options.breaker.resetTimeoutMs,
    rollingCountTimeout: options.breaker.rollingCountTimeoutMs,
    rollingCountBuckets: options.breaker.rollingCountBuckets ?? 10,
    // Only failures that say something about the downstream's health count towards opening; the
    // rest are answers from a live downstream, which opossum counts as successes. A half-open
    // trial its caller cancelled, the one cancellation the breaker hears of (see runAttempt),
    // proved nothing: it counts as a failure.
    errorFilter: ((error: unknown, call: GuardedCall) =>
      call.attempt.trial && isCancelled(error) ? false : !isInfrastructureError(error)) as (error: unknown) => boolean,
  });

  const counts = {
    calls: 0,
    successes: 0,
    failures: 0,
    timeouts: 0,
    ignoredErrors: 0,
    cancelled: 0,
    rejected: 0,
    skipped: 0,
  };
  const listeners = new Set<StateListener>();
  let inFlight = 0;
  let failuresInARow = 0;

  const currentState = (): BreakerState => (breaker.opened ? 'open' : breaker.halfOpen ? 'halfOpen' : 'closed');

  metrics?.breakerState.set({ downstream }, BREAKER_STATE_VALUE.closed);
  // Every transition starts at zero, so that increase() sees the first one and the series exist
  // for dashboards and alerts before anything has gone wrong.
  for (const state of Object.keys(BREAKER_STATE_VALUE) as BreakerState[]) {
    metrics?.breakerTransitions.inc({ downstream, to: state }, 0);
    metrics?.breakerFailures.inc({ downstream, state }, 0);
  }
  const transition = (state: BreakerState) => {
    metrics?.breakerState.set({ downstream }, BREAKER_STATE_VALUE[state]);
    metrics?.breakerTransitions.inc({ downstream, to: state });
    if (state === 'open') logger?.warn('circuit breaker opened', { downstream, ...breaker.stats });
    else
      logger?.info(
        state === 'halfOpen' ? 'circuit breaker half-open: letting one trial call through' : 'circuit breaker closed',
        { downstream },
      );
    for (const listener of listeners) listener(state, downstream);
  };
  // Opossum's own count, labelled before it decides to open: failures while `closed` are the ones
  // that opened it, a `halfOpen` one is a failed trial (a cancelled trial included), and `open`
  // ones were already in flight when it opened. The guard's `failures` stat leaves cancelled
  // trials out, so this counter is the one that says how quickly a breaker opened.
  breaker.on('failure', () => metrics?.breakerFailures.inc({ downstream, state: currentState() }));
  breaker.on('open', () => transition('open'));
  breaker.on('halfOpen', () => transition('halfOpen'));
  breaker.on('close', () => {
    failuresInARow = 0;
    transition('closed');
  });

  const call = async <T>(
    work: (signal: AbortSignal, attempt: Attempt) => Promise<T>,
    callOptions: GuardCallOptions,
  ): Promise<T> => {
    counts.calls += 1;
    const callerSignal = callOptions.signal;
    const startedAt = Date.now();
    let timeoutMs: number;
    try {
      if (callerSignal?.aborted) throw abortReason(callerSignal);
      timeoutMs = hopTimeoutMs(callOptions.deadlineUnixMs, callOptions.capMs ?? Number.POSITIVE_INFINITY, startedAt);
    } catch (error) {
      counts.skipped += 1;
      throw error;
    }
    if (options.maxConcurrent !== undefined && inFlight >= options.maxConcurrent) {
      counts.rejected += 1;
      throw new HoplineError('resource_exhausted', `${downstream} already has ${inFlight} calls in flight`);
    }

    // Turned away here, not by opossum, which counts the calls it rejects in the window whose
    // failure share decides: once closed again, a downstream failing every call could not open
    // the breaker until those rejections aged out. Only the half-open trial goes through.
    if (!breaker.isShutdown && !breaker.closed && !breaker.pendingClose) {
      counts.rejected += 1;
      throw new BreakerOpenError(downstream);
    }

    const controller = new AbortController();
    const guarded: GuardedCall = { work, controller, attempt: { trial: breaker.halfOpen && breaker.pendingClose } };
    const abort = (reason: HoplineError) => {
      controller.abort(reason);
      guarded.giveUp?.(reason);
    };
    const timedOut = () => new DeadlineExceededError(`${downstream} did not answer within ${Math.round(timeoutMs)} ms`);
    const timer = timeoutMs <= MAX_TIMER_MS ? setTimeout(() => abort(timedOut()), timeoutMs) : undefined;
    // A caller whose signal aborts at this call's deadline (a gRPC handler's at the inbound
    // deadline, which is the one it passed) may run before this guard's timer does: the call
    // still timed out, and the breaker must count it, or a dependency that hangs never opens it.
    const onCallerAbort = () =>
      abort(
        Date.now() >= startedAt + timeoutMs
          ? timedOut()
          : new CancelledError(`the call to ${downstream} was cancelled`, { cause: callerSignal?.reason }),
      );
    callerSignal?.addEventListener('abort', onCallerAbort, { once: true });
    inFlight += 1;
    try {
      // The breaker's promise settles once it has counted the outcome, before the guard counts
      // its own failures in a row; a cancellation it never hears of settles the call directly.
      const result = (await new Promise<unknown>((resolve, reject) => {
        guarded.cancel = reject;
        breaker.fire(guarded).then(resolve, reject);
      })) as T;
      counts.successes += 1;
      failuresInARow = 0;
      return result;
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (CircuitBreaker.isOurError(error as Error) && (code === OPOSSUM_OPEN || code === OPOSSUM_SHUTDOWN)) {
        counts.rejected += 1;
        const rejection = new BreakerOpenError(downstream, { cause: error });
        controller.abort(rejection);
        throw rejection;
      }
      const failure = toHoplineError(error);
      if (failure.code === 'cancelled') counts.cancelled += 1;
      else if (isInfrastructureError(failure)) {
        counts.failures += 1;
        failuresInARow += 1;
        const limit = options.breaker.consecutiveFailures;
        if (limit !== undefined && failuresInARow >= limit && breaker.closed) breaker.open();
      } else {
        // An answer about the request came from a live downstream: the run of failures is over.
        counts.ignoredErrors += 1;
        failuresInARow = 0;
      }
      if (failure.code === 'deadline_exceeded' && controller.signal.aborted && controller.signal.reason === failure)
        counts.timeouts += 1;
      throw failure;
    } finally {
      inFlight -= 1;
      clearTimeout(timer);
      callerSignal?.removeEventListener('abort', onCallerAbort);
    }
  };

  return {
    downstream,
    get state() {
      return currentState();
    },
    call,
    stats: () => ({ downstream, state: currentState(), ...counts }),
    onStateChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close() {
      if (!breaker.closed) breaker.close();
    },
    shutdown: () => breaker.shutdown(),
  };
}
