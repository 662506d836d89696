import { setTimeout as sleep } from 'node:timers/promises';

export interface WaitForOptions {
  /** Give up after this long; defaults to 5 s. */
  timeoutMs?: number;
  /** Pause between two checks; defaults to 10 ms. */
  intervalMs?: number;
  /** Names the condition in the timeout error. */
  description?: string;
}

/**
 * Polls `predicate` until it returns a truthy value and resolves with that value: the one way
 * tests wait for something asynchronous to happen, instead of sleeping a fixed time. A
 * predicate that throws counts as "not yet"; the last error is attached to the timeout error.
 */
export async function waitFor<T>(
  predicate: () => T | Promise<T>,
  options: WaitForOptions = {},
): Promise<Exclude<T, false | 0 | '' | null | undefined>> {
  const timeoutMs = options.timeoutMs ?? 5_000;
  const intervalMs = options.intervalMs ?? 10;
  const giveUpAt = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await predicate();
      if (value) return value as Exclude<T, false | 0 | '' | null | undefined>;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() >= giveUpAt) {
      const what = options.description ?? 'condition';
      throw new Error(
        `waitFor: ${what} not met within ${timeoutMs} ms`,
        lastError === undefined ? undefined : { cause: lastError },
      );
    }
    await sleep(intervalMs);
  }
}
