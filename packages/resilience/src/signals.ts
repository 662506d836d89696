import { CancelledError, isHoplineError, type HoplineError } from '@hopline/contracts';

/**
 * Why a signal aborted, as a HoplineError: Hopline's own aborts carry one as their reason
 * (a DeadlineExceededError from a timer, a BreakerOpenError); anything else is a cancellation.
 */
export function abortReason(signal: AbortSignal): HoplineError {
  const reason: unknown = signal.reason;
  if (isHoplineError(reason)) return reason;
  return new CancelledError('the caller cancelled the call', { cause: reason });
}

/**
 * Settles like `work`, or rejects with the signal's reason as soon as the signal aborts, so
 * that work which ignores its signal cannot hold the caller past its deadline.
 */
export function abortable<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(abortReason(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortReason(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/** Waits `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortReason(signal as AbortSignal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
