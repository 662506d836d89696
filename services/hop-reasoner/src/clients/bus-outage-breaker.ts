import type { Bus } from '@hopline/bus';
import type { Guard } from '@hopline/resilience';
import type { WorkerDirectory } from './worker-directory.js';

/**
 * Closes the retrieval breaker that a bus outage opened as soon as a retrieval worker is heard
 * over the restored bus, instead of after its reset period. While the bus is down no retrieval
 * reaches a worker, so those failures say nothing about the workers; left open (and then
 * half-open with a single trial), the breaker answered every question restarted after the
 * outage without retrieval. A breaker that opened while the bus was up waits out its reset.
 * "During the outage" includes `settleMs` after the bus came back: retrievals sent into the
 * outage time out after it. Returns the function that stops watching.
 */
export function closeRetrievalBreakerAfterBusOutage(deps: {
  bus: Pick<Bus, 'connection'>;
  guard: Pick<Guard, 'state' | 'onStateChange' | 'close'>;
  workers: Pick<WorkerDirectory, 'onHeard'>;
  settleMs: number;
}): () => void {
  const { bus, guard, settleMs } = deps;
  let openedByOutage = false;
  const stopWatchingBreaker = guard.onStateChange((state) => {
    if (state !== 'open') return;
    const connection = bus.connection();
    openedByOutage = !connection.connected || Date.now() - connection.sinceUnixMs < settleMs;
  });
  const stopListening = deps.workers.onHeard(() => {
    if (!openedByOutage || !bus.connection().connected) return;
    openedByOutage = false;
    if (guard.state !== 'closed') guard.close();
  });
  return () => {
    stopWatchingBreaker();
    stopListening();
  };
}
