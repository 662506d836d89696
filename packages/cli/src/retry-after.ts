import { retryAfterMs } from '@hopline/contracts';

/**
 * The whole seconds a refusal for now asks to wait before the same request goes again: a 429
 * (rate limit) or a 503 (the gateway's message bus away, the gateway shutting down) with
 * Retry-After, in seconds as the gateway sends it or as an HTTP date (as a proxy in front of it
 * may send it). Never under a second: "0", or a date already past, would send the request
 * again at once, as often as it is refused, without using up any of --retry-for. Undefined for
 * any other answer.
 */
export function retryAfterSeconds(response: Response, now = Date.now()): number | undefined {
  if (response.status !== 429 && response.status !== 503) return undefined;
  const waitMs = retryAfterMs(response.headers.get('retry-after'), now);
  return waitMs === undefined ? undefined : Math.max(1, Math.ceil(waitMs / 1_000));
}
