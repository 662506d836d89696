/**
 * Document versions share one order with the time: an ingest without a version and every
 * delete take the gateway's clock (ms since the Unix epoch). A version ahead of the clock would
 * outrank every later ingest and delete of the document and pin it, so the gateway refuses
 * versions after its own clock, and indexers refuse commands further ahead than clocks
 * between machines can plausibly differ.
 */
export const VERSION_CLOCK_SKEW_MS = 5 * 60_000;

/** Whether an indexer must refuse this version, judged by its own clock. */
export function versionAheadOfClock(version: number, now: number = Date.now()): boolean {
  return version > now + VERSION_CLOCK_SKEW_MS;
}
