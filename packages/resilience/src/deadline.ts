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
 * A signal that aborts at the deadline with a DeadlineExceededError, or earlier with the
 * parent's reason when the parent aborts. Its timer does not keep the process alive.
 */
export function deadlineSignal(deadlineUnixMs: number, parent?: AbortSignal): AbortSignal {
  const controller = new AbortController();
  if (parent?.aborted) {
    controller.abort(abortReason(parent));
    return controller.signal;
  }
  const left = remainingMs(deadlineUnixMs);
  if (left <= 0) {
    controller.abort(new DeadlineExceededError(`the deadline ${new Date(deadlineUnixMs).toISOString()} has passed`));
    return controller.signal;
  }
  const timer =
    left <= MAX_TIMER_MS
      ? setTimeout(
          () =>
            controller.abort(
              new DeadlineExceededError(`the deadline ${new Date(deadlineUnixMs).toISOString()} has passed`),
            ),
          left,
        )
      : undefined;
  timer?.unref();
  parent?.addEventListener(
    'abort',
    () => {
      clearTimeout(timer);
      controller.abort(abortReason(parent));
    },
    // Dropped once this signal aborts, so a long-lived parent does not collect listeners.
    { once: true, signal: controller.signal },
  );
  return controller.signal;
}
