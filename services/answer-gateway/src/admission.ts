import type { Redis } from 'ioredis';
import { setNewest } from './newest-first.js';
import { problems } from './problem.js';

export type RateVerdict = { allowed: true } | { allowed: false; retryAfterMs: number };

/** Takes one token from an API key's bucket; never waits for a slot. */
export interface RateLimiter {
  take(keyId: string): RateVerdict | Promise<RateVerdict>;
}

export interface RateLimitOptions {
  /** Tokens added per second. */
  ratePerSecond: number;
  /** Bucket size: the burst a key may ask at once. */
  burst: number;
  now?: () => number;
}

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/**
 * A token bucket per API key, in this process: the limit of one gateway instance. Checking is
 * O(1) and never waits, so a refused request is answered at once and costs the questions
 * already running nothing.
 */
export class KeyRateLimiter implements RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly now: () => number;

  constructor(private readonly options: RateLimitOptions) {
    this.now = options.now ?? Date.now;
  }

  /** Keys with a bucket in memory. */
  get trackedKeys(): number {
    return this.buckets.size;
  }

  /** Takes one token; when the bucket is empty, returns how long until one is back. */
  take(keyId: string): RateVerdict {
    const now = this.now();
    const bucket = this.refill(keyId, now);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { allowed: true };
    }
    return { allowed: false, retryAfterMs: Math.ceil(((1 - bucket.tokens) / this.options.ratePerSecond) * 1000) };
  }

  private refill(keyId: string, now: number): Bucket {
    let bucket = this.buckets.get(keyId);
    if (!bucket) {
      if (this.buckets.size >= 10_000) this.forgetFullBuckets(now);
      bucket = { tokens: this.options.burst, updatedAt: now };
      this.buckets.set(keyId, bucket);
      return bucket;
    }
    const elapsedSeconds = Math.max(0, now - bucket.updatedAt) / 1000;
    bucket.tokens = Math.min(this.options.burst, bucket.tokens + elapsedSeconds * this.options.ratePerSecond);
    bucket.updatedAt = now;
    return bucket;
  }

  // A bucket that would be full again is the same as no bucket: dropping it bounds memory.
  private forgetFullBuckets(now: number): void {
    for (const [keyId, bucket] of this.buckets) {
      if (bucket.tokens + ((now - bucket.updatedAt) / 1000) * this.options.ratePerSecond >= this.options.burst)
        this.buckets.delete(keyId);
    }
  }
}

// The same bucket as KeyRateLimiter, kept in Redis and updated atomically on Redis's clock, so
// that every gateway instance draws on one bucket per key. Returns {allowed, ms until a token}.
const TAKE_TOKEN = `
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local bucket = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(bucket[1]) or burst
local at = tonumber(bucket[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - at) * rate)
local allowed = 0
local wait = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
else
  wait = math.ceil((1 - tokens) / rate)
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rate) + 1000)
return {allowed, wait}
`;

export interface SharedRateLimiterOptions extends RateLimitOptions {
  redis: Redis;
  /** Used while Redis cannot answer: the instance's own bucket, so admission never stops the API. */
  fallback: RateLimiter;
  onError?: (error: unknown) => void;
}

/**
 * One token bucket per API key for all gateway instances, in Redis: with two replicas behind a
 * load balancer a key gets its rate once, not once per replica. While Redis fails, each
 * instance falls back to its own bucket (and says so), rather than refusing or admitting all.
 */
export class SharedRateLimiter implements RateLimiter {
  constructor(private readonly options: SharedRateLimiterOptions) {}

  async take(keyId: string): Promise<RateVerdict> {
    try {
      const [allowed, waitMs] = (await this.options.redis.eval(
        TAKE_TOKEN,
        1,
        `hopline:rate:${keyId}`,
        String(this.options.ratePerSecond / 1000),
        String(this.options.burst),
      )) as [number, number];
      return allowed === 1 ? { allowed: true } : { allowed: false, retryAfterMs: waitMs };
    } catch (error) {
      this.options.onError?.(error);
      return this.options.fallback.take(keyId);
    }
  }
}

export interface AdmissionOptions extends RateLimitOptions {
  /** The per-key buckets: this instance's, or shared through Redis. Default: this instance's. */
  rate?: RateLimiter;
  maxInFlight: number;
  /** Questions this instance runs now. */
  inFlight: () => number;
  /** What one tenant may hold of `maxInFlight` while another tenant has questions running too. */
  maxInFlightPerTenant: number;
  /** The tenant's questions among `inFlight()`. */
  inFlightOf: (tenantId: string) => number;
  onRejected?: (reason: AdmissionRejection) => void;
}

export type AdmissionRejection = 'rate' | 'in_flight' | 'tenant_share';

/** A tenant refused a slot counts as waiting for this long: twice the Retry-After it was given. */
const WAITER_MEMORY_MS = 2_000;
const MAX_WAITERS_REMEMBERED = 1_000;

/** Decides, without waiting, whether a question may start; throws a 429 problem when it may not. */
export class Admission {
  private readonly rate: RateLimiter;
  private readonly now: () => number;
  /** Tenants refused a slot because every slot was taken, by when: oldest first. */
  private readonly waiters = new Map<string, number>();

  constructor(private readonly options: AdmissionOptions) {
    this.rate = options.rate ?? new KeyRateLimiter(options);
    this.now = options.now ?? Date.now;
  }

  /**
   * Charges the key's rate: every ask counts, cached answers included. Ingestion requests (a
   * batch, an NDJSON stream, an upload, a delete) draw on a bucket of their own at the same
   * rate, so that a key's bulk ingest does not take its questions' turn, nor they its.
   */
  async chargeKey(keyId: string, work: 'ask' | 'ingest' = 'ask'): Promise<void> {
    const verdict = await this.rate.take(work === 'ask' ? keyId : `${keyId}:ingest`);
    if (!verdict.allowed) {
      this.options.onRejected?.('rate');
      const what = work === 'ask' ? 'questions' : 'ingestion requests';
      throw problems.tooManyRequests(
        `this API key may send ${this.options.ratePerSecond} ${what} per second`,
        verdict.retryAfterMs,
      );
    }
  }

  /**
   * Refuses a question that would exceed the instance's bound on questions in flight, or the
   * tenant's share of it. The share binds only while another tenant has questions running or
   * was refused a slot within the last few seconds: a tenant alone may use every slot, but one
   * that filled them gets no new slot as its questions end until it is back under its share,
   * so the slots it frees go to the tenants it kept waiting.
   */
  checkCapacity(tenantId: string): void {
    const { maxInFlight, maxInFlightPerTenant } = this.options;
    const now = this.now();
    this.forgetWaitersBefore(now - WAITER_MEMORY_MS);
    const running = this.options.inFlight();
    if (running >= maxInFlight) {
      setNewest(this.waiters, tenantId, now, MAX_WAITERS_REMEMBERED);
      this.options.onRejected?.('in_flight');
      throw problems.tooManyRequests(`this instance is answering ${maxInFlight} questions; retry shortly`, 1_000);
    }
    const tenantRunning = this.options.inFlightOf(tenantId);
    if (tenantRunning >= maxInFlightPerTenant && (running > tenantRunning || this.othersWaiting(tenantId))) {
      this.options.onRejected?.('tenant_share');
      throw problems.tooManyRequests(
        `this instance is answering ${tenantRunning} of this tenant's questions, its share while other tenants wait; retry shortly`,
        1_000,
      );
    }
  }

  private forgetWaitersBefore(cutoff: number): void {
    for (const [tenantId, refusedAt] of this.waiters) {
      if (refusedAt >= cutoff) return;
      this.waiters.delete(tenantId);
    }
  }

  private othersWaiting(tenantId: string): boolean {
    return this.waiters.size > (this.waiters.has(tenantId) ? 1 : 0);
  }
}
