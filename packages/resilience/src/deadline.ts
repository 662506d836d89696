import { DeadlineExceededError, ValidationError } from '@hopline/contracts';
import { abortReason } from './signals.js';

/** Node's timers overflow past this and fire at once; a longer wait is no timeout at all. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

function checkDeadline(deadlineUnixMs: number): void {
  if (Number.isNaN(deadlineUnixMs))
    throw new ValidationError('the deadline must be a number of milliseconds since the Unix epoch');
}

/** Milliseconds left before the absolute deadline; never negative. */
export function remainingMs(deadlineUnixMs: number, now: number = Date.now()): number {
  checkDeadline(deadlineUnixMs);
  return Math.max(0, deadlineUnixMs - now);
}

/**
 * The timeout for one call: what is left of the question's deadline, capped by the call's own
 * limit. Throws DeadlineExceededError when nothing is left (an unset proto deadline is 0, so it
 * lands here too rather than waiting forever).
 */
export function hopTimeoutMs(deadlineUnixMs: number, capMs: number, now: number = Date.now()): number {
  const left = remainingMs(deadlineUnixMs, now);
  if (left <= 0) {
    throw new DeadlineExceededError(
      `the deadline ${new Date(deadlineUnixMs).toISOString()} passed ${now - deadlineUnixMs} ms ago`,
    );
  }
  return Math.min(left, capMs);
}

/**
 * What a handler keeps of its caller's deadline for the part of its work that follows its
 * downstream call: the fallback when that call fails (rules, a lexical scorer: milliseconds in
 * process), the reply's way back, and timers that fire a little late. A fifth of what is left
 * keeps a short deadline's downstream most of its time; past 250 ms, a fifth would take whole
 * seconds from a long deadline's downstream for work that does not need them.
 */
const REPLY_HEADROOM_SHARE = 0.2;
const REPLY_HEADROOM_MAX_MS = 250;

/**
 * The deadline for a handler's downstream call, short of the handler's own: when the downstream
 * hangs, its call fails with time left for the fallback to reach the caller, rather than at the
 * moment the caller gives up on the handler too.
 */
export function downstreamDeadline(handlerDeadlineUnixMs: number, now: number = Date.now()): number {
  const left = remainingMs(handlerDeadlineUnixMs, now);
  return handlerDeadlineUnixMs - Math.min(left * REPLY_HEADROOM_SHARE, REPLY_HEADROOM_MAX_MS);
}

/** A signal for one piece of work, bounded by a deadline and by its parent's abort. */
export interface DeadlineScope {
  readonly signal: AbortSignal;
  /**
   * Ends the scope when its work is done: the timer stops and the parent forgets the signal.
   * Without it both would live until the deadline, and a parent that outlives many scopes (a
   * question's signal across its calls, a service's across its questions) would collect a
   * listener from each.
   */
  release(): void;
}

/**
 * A signal that aborts at the deadline with a DeadlineExceededError, or earlier with the
 * parent's reason when the parent aborts. Its timer does not keep the process alive. Release
 * the scope when the work ends (`withDeadline` does).
 */
export function deadlineScope(deadlineUnixMs: number, parent?: AbortSignal): DeadlineScope {
  const controller = new AbortController();
  const alreadyAborted = { signal: controller.signal, release: () => undefined };
  if (parent?.aborted) {
    controller.abort(abortReason(parent));
    return alreadyAborted;
  }
  const left = remainingMs(deadlineUnixMs);
  if (left <= 0) {
    controller.abort(new DeadlineExceededError(`the deadline ${new Date(deadlineUnixMs).toISOString()} has passed`));
    return alreadyAborted;
  }
  const onParentAbort = () => {
    clearTimeout(timer);
    controller.abort(abortReason(parent as AbortSignal));
  };
  const timer =
    left <= MAX_TIMER_MS
      ? setTimeout(() => {
          // Dropped once this signal aborts at its deadline, should that come before the release.
          parent?.removeEventListener('abort', onParentAbort);
          controller.abort(
            new DeadlineExceededError(`the deadline ${new Date(deadlineUnixMs).toISOString()} has passed`),
          );
        }, left)
      : undefined;
  timer?.unref();
  // Without the `signal` option: dropping the listener when this signal aborts would add a
  // listener to this signal as well, per scope.
  parent?.addEventListener('abort', onParentAbort, { once: true });
  return {
    signal: controller.signal,
    release: () => {
      clearTimeout(timer);
      parent?.removeEventListener('abort', onParentAbort);
    },
  };
}

/** Runs `work` under a deadline scope, released when the work settles. */
export async function withDeadline<T>(
  deadlineUnixMs: number,
  parent: AbortSignal | undefined,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const scope = deadlineScope(deadlineUnixMs, parent);
  try {
    return await work(scope.signal);
  } finally {
    scope.release();
  }
}
