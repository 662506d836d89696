import { toHoplineError, type HoplineError } from '@hopline/contracts';

export type Outcome<T> = { value: T; degraded: false } | { value: T; degraded: true; error: HoplineError };

export interface FallbackOptions {
  /** Which failures the fallback may answer for. Default: all but cancellation. */
  when?: (error: HoplineError) => boolean;
}

// A cancelled question wants no answer at all, degraded or not.
const notCancelled = (error: HoplineError): boolean => error.code !== 'cancelled';

/**
 * The primary's value, or the fallback's when the primary failed, flagged `degraded` with the
 * failure that caused it so that the answer can say so.
 */
export async function withFallback<T>(
  primary: () => Promise<T>,
  fallback: (error: HoplineError) => T | Promise<T>,
  options: FallbackOptions = {},
): Promise<Outcome<T>> {
  try {
    return { value: await primary(), degraded: false };
  } catch (error) {
    const failure = toHoplineError(error);
    if (!(options.when ?? notCancelled)(failure)) throw failure;
    return { value: await fallback(failure), degraded: true, error: failure };
  }
}
