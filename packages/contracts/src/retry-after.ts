/**
 * A `Retry-After` value (HTTP's header, or the gRPC trailer our servers send as it) in ms from
 * `now`: a number of seconds, or an HTTP date (a date already past: 0). Undefined when absent or
 * unreadable, a negative number included: then no wait was asked for.
 */
export function retryAfterMs(value: string | null | undefined, now: number = Date.now()): number | undefined {
  const text = value?.trim() ?? '';
  if (text === '') return undefined;
  const seconds = Number(text);
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : undefined;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
