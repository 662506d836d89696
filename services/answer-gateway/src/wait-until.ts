/**
 * Resolves true once `holds()` does, checked now and each time a listener in `wakers` is called,
 * or false when `timeoutMs` passes first; the listener leaves `wakers` either way. What a
 * shutdown waits on: questions running, requests unanswered.
 */
export function waitUntil(holds: () => boolean, wakers: Set<() => void>, timeoutMs: number): Promise<boolean> {
  if (holds()) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      wakers.delete(check);
      resolve(false);
    }, timeoutMs);
    const check = () => {
      if (!holds()) return;
      wakers.delete(check);
      clearTimeout(timer);
      resolve(true);
    };
    wakers.add(check);
  });
}
