import { CancelledError, DeadlineExceededError } from '@hopline/contracts';

export interface GuardCallOptions {
  /** Absolute deadline, milliseconds since the Unix epoch. */
  deadlineUnixMs: number;
  /** The caller's cancellation (client gone, question cancelled). */
  signal?: AbortSignal;
}

/**
 * Runs one call to a dependency under that dependency's protection (deadline, breaker,
 * bulkhead...). `@hopline/resilience`'s `createGuard(...)` has this shape; the retriever only
 * needs the shape, so it takes one guard per search path and never builds its own.
 */
export interface Guard {
  /** The breaker's state where the guard has one (closed, halfOpen, open); spans carry it. */
  readonly state?: string;
  call<T>(work: (signal: AbortSignal) => Promise<T>, options: GuardCallOptions): Promise<T>;
}

/** Why a call may not start (its caller cancelled, its deadline passed), or undefined when it may. */
function refusal(options: GuardCallOptions, remainingMs: number): Error | undefined {
  if (options.signal?.aborted) return new CancelledError('call cancelled before it started');
  if (remainingMs <= 0) return new DeadlineExceededError('deadline passed before the call started');
  return undefined;
}

/**
 * The minimal guard: enforces the deadline and the caller's cancellation, nothing else, where no
 * breaker is wanted (the eval harness's retrieval stack, tests); a search wholly in the process
 * takes `inProcessGuard`, which sets up nothing per call. A call that outlives its deadline is abandoned: the
 * caller gets `DeadlineExceededError` at the deadline whether or not the work heeds the signal.
 */
export function createDeadlineGuard(now: () => number = Date.now): Guard {
  return {
    call<T>(work: (signal: AbortSignal) => Promise<T>, options: GuardCallOptions): Promise<T> {
      const remaining = options.deadlineUnixMs - now();
      const refused = refusal(options, remaining);
      if (refused) return Promise.reject(refused);
      const controller = new AbortController();
      return new Promise<T>((resolve, reject) => {
        const fail = (error: Error): void => {
          controller.abort(error);
          reject(error);
        };
        const timer = setTimeout(
          () => fail(new DeadlineExceededError(`call exceeded its deadline (${remaining} ms)`)),
          remaining,
        );
        const onCancel = (): void => fail(new CancelledError('call cancelled by the caller'));
        options.signal?.addEventListener('abort', onCancel, { once: true });
        const settle = (): void => {
          clearTimeout(timer);
          options.signal?.removeEventListener('abort', onCancel);
        };
        work(controller.signal).then(
          (value) => {
            settle();
            resolve(value);
          },
          (error: unknown) => {
            settle();
            reject(error);
          },
        );
      });
    },
  };
}

/** The signal of an in-process call whose caller gave none: nothing aborts it. */
export const NEVER_ABORTED: AbortSignal = new AbortController().signal;

/**
 * The guard of work done in this process from start to end without waiting on anything outside
 * it: the embedded indexes' searches with an embedder in the process, the lexical scorer. There
 * is no remote health for a breaker to track, and no timer could cut the work short, since a
 * timer only fires once the work has finished; so neither is set up per call. A call made after
 * the deadline, or after the caller cancelled, does not start, as with the other guards.
 */
export const inProcessGuard: Guard = {
  call<T>(work: (signal: AbortSignal) => Promise<T>, options: GuardCallOptions): Promise<T> {
    const refused = refusal(options, options.deadlineUnixMs - Date.now());
    return refused ? Promise.reject(refused) : work(options.signal ?? NEVER_ABORTED);
  },
};
