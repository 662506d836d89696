import { CancelledError, isInfrastructureError, toHoplineError } from '@hopline/contracts';
import { abortReason } from './signals.js';

// Why the attempts still running are aborted once the call has settled (answered, or ended on a
// failure that another attempt cannot mend). Their outcomes are dropped, though an attempt's own
// guard may keep it as the cause of its cancellation; one made per call built an error and its
// stack trace for every hedged call.
const CALL_SETTLED = new CancelledError('the hedged call has settled');

export interface HedgeOptions {
  /** How long the first attempt may run alone before the second starts beside it. */
  delayMs: number;
  /** Aborting it aborts both attempts; the call then rejects with its reason. */
  signal: AbortSignal;
}

export interface Hedged<T> {
  value: T;
  /** Which attempt answered: 2 means the first was slower than the hedge delay, or failed. */
  winner: 1 | 2;
}

/**
 * Runs `attempt(1)`; when it has not answered after `delayMs`, or failed with an
 * infrastructure error before that, runs `attempt(2)` too, meant for another replica. The
 * first answer wins and the other attempt's signal aborts; when both fail, the call rejects
 * with the last failure. An error about the request itself (not an infrastructure failure)
 * ends the call at once: another replica would refuse it too.
 */
export function hedged<T>(
  attempt: (attemptNumber: 1 | 2, signal: AbortSignal) => Promise<T>,
  options: HedgeOptions,
): Promise<Hedged<T>> {
  const { signal } = options;
  if (signal.aborted) return Promise.reject(abortReason(signal));
  return new Promise<Hedged<T>>((resolve, reject) => {
    const controllers = new Map<1 | 2, AbortController>();
    let failures = 0;
    let settled = false;
    const finish = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      const reason = signal.aborted ? abortReason(signal) : CALL_SETTLED;
      for (const controller of controllers.values()) controller.abort(reason);
      outcome();
    };
    const onAbort = () => finish(() => reject(abortReason(signal)));
    const launch = (attemptNumber: 1 | 2) => {
      if (settled || controllers.has(attemptNumber)) return;
      const controller = new AbortController();
      controllers.set(attemptNumber, controller);
      new Promise<T>((run) => run(attempt(attemptNumber, controller.signal))).then(
        (value) => finish(() => resolve({ value, winner: attemptNumber })),
        (error: unknown) => {
          if (settled) return;
          failures += 1;
          const failure = toHoplineError(error);
          if (failures === 2 || !isInfrastructureError(failure)) finish(() => reject(failure));
          else launch(2);
        },
      );
    };
    const timer = setTimeout(() => launch(2), Math.max(0, options.delayMs));
    signal.addEventListener('abort', onAbort, { once: true });
    launch(1);
  });
}

/**
 * The recent latencies of one kind of call, for a hedge delay: its p95 over the last
 * `capacity` successful calls, clamped to [floorMs, ceilingMs]. Until `minSamples` are in,
 * the ceiling stands, so that a cold start does not hedge every call.
 */
export class LatencyWindow {
  /** The samples in the order they came, a ring once full: the next one replaces the oldest. */
  private readonly arrivals: number[] = [];
  /**
   * The same samples in ascending order, kept so as each one comes: every call asks for the
   * delay, and sorting the window for each would cost more than the call's own bookkeeping.
   */
  private readonly ascending: number[] = [];
  private next = 0;

  constructor(
    private readonly options: { capacity?: number; minSamples?: number; floorMs: number; ceilingMs: number },
  ) {}

  record(latencyMs: number): void {
    const capacity = this.options.capacity ?? 200;
    if (this.arrivals.length < capacity) {
      this.arrivals.push(latencyMs);
    } else {
      const oldest = this.arrivals[this.next] as number;
      this.ascending.splice(firstAtLeast(this.ascending, oldest), 1);
      this.arrivals[this.next] = latencyMs;
    }
    this.ascending.splice(firstAtLeast(this.ascending, latencyMs), 0, latencyMs);
    this.next = (this.next + 1) % capacity;
  }

  /** The delay after which a second attempt is worth its cost. */
  hedgeDelayMs(ceilingMs: number = this.options.ceilingMs): number {
    const ceiling = Math.min(ceilingMs, this.options.ceilingMs);
    const { ascending } = this;
    if (ascending.length < (this.options.minSamples ?? 20)) return ceiling;
    const p95 = ascending[Math.min(ascending.length - 1, Math.floor(ascending.length * 0.95))] ?? ceiling;
    return Math.min(ceiling, Math.max(this.options.floorMs, p95));
  }
}

/** The index of the first value in ascending `values` that is not below `value` (binary search). */
function firstAtLeast(values: readonly number[], value: number): number {
  let low = 0;
  let high = values.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((values[middle] as number) < value) low = middle + 1;
    else high = middle;
  }
  return low;
}
