/**
 * Resilience for every cross-service call. The pipeline, in the order a call meets it:
 *
 *   validate → bulkhead → breaker → timeout → retry → fallback → trace
 *
 * - validate: the request is checked before anything is spent on it (codecs, zod) — by the
 *   caller, before the guard.
 * - bulkhead: `maxConcurrent` calls in flight per downstream; more are rejected at once.
 * - breaker:  one opossum breaker per downstream; open → BreakerOpenError at once. Only
 *   infrastructure failures (`isInfrastructureError`) count towards opening.
 * - timeout:  each call gets min(cap, what is left of the question's absolute deadline) and
 *   its own AbortSignal (DeadlineExceededError on timeout, CancelledError on the caller's abort
 *   before then). The breaker is told nothing of a cancelled call, but for a cancelled half-open
 *   trial, which counts as failed.
 *   These four are `guard.call`.
 * - retry:    `retryWithinDeadline` wraps `guard.call`, so every attempt passes the bulkhead and
 *   breaker again, and no attempt starts that the deadline cannot fit. Where replicas are
 *   addressable one by one, `hedged` runs inside `guard.call` instead: a second attempt on
 *   another replica once the first outlasts its recent p95 (`LatencyWindow`) or fails, within
 *   the same call's timeout, so one stuck replica costs a hedge delay, not the deadline.
 * - fallback: `withFallback` turns the final failure into a degraded, flagged result.
 * - trace:    the transport helpers' CLIENT span and the caller's `instrument` span record the
 *   outcome, breaker state and degraded flag.
 *
 *   withFallback(() => retryWithinDeadline(() => guard.call(work, { deadlineUnixMs, capMs }), ...), fallback)
 */
export * from './deadline.js';
export * from './fallback.js';
export * from './guard.js';
export * from './hedge.js';
export * from './retry.js';
export * from './signals.js';
