import { CancelledError, DeadlineExceededError, ValidationError } from '@hopline/contracts';
import type { RequestOptions } from './bus.js';

/**
 * What both adapters check before a request leaves: a caller whose deadline already passed,
 * or whose signal already aborted, gets its answer without a message being sent.
 */
// Node fires a timer longer than this at once, which would turn a generous timeout into none.
const MAX_TIMEOUT_MS = 2_147_483_647;

export function assertRequestCanStart(subject: string, options: RequestOptions): void {
  if (!Number.isFinite(options.timeoutMs) || options.timeoutMs > MAX_TIMEOUT_MS) {
    throw new ValidationError(
      `request ${subject}: timeoutMs must be a finite number of at most ${MAX_TIMEOUT_MS}, not ${options.timeoutMs}`,
    );
  }
  if (options.signal?.aborted) throw new CancelledError(`request ${subject}: cancelled before it was sent`);
  if (options.timeoutMs <= 0)
    throw new DeadlineExceededError(`request ${subject}: the deadline passed before it was sent`);
}

/** Rejects with a CancelledError as soon as the signal aborts; `onAbort` releases what the request holds. */
export function raceAbort<T>(
  work: Promise<T>,
  subject: string,
  signal: AbortSignal | undefined,
  onAbort?: () => void,
): Promise<T> {
  if (signal === undefined) return work;
  return new Promise<T>((resolve, reject) => {
    const abort = () => {
      onAbort?.();
      reject(new CancelledError(`request ${subject}: cancelled by the caller`, { cause: signal.reason }));
    };
    signal.addEventListener('abort', abort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', abort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', abort);
        reject(error);
      },
    );
  });
}
