import { problems } from './problem.js';

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
 * A token bucket per API key. Checking is O(1) and never waits, so a refused request is
 * answered at once and costs the questions already running nothing.
 */
export class KeyRateLimiter {
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
  take(keyId: string): { allowed: true } | { allowed: false; retryAfterMs: number } {
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

export interface AdmissionOptions extends RateLimitOptions {
  maxInFlight: number;
  /** Questions this instance runs now. */
  inFlight: () => number;
  onRejected?: (reason: 'rate' | 'in_flight') => void;
}

/** Decides, without waiting, whether a question may start; throws a 429 problem when it may not. */
export class Admission {
  private readonly rate: KeyRateLimiter;

  constructor(private readonly options: AdmissionOptions) {
    this.rate = new KeyRateLimiter(options);
  }

  /** Charges the key's rate: every ask counts, cached answers included. */
  chargeKey(keyId: string): void {
    const verdict = this.rate.take(keyId);
    if (!verdict.allowed) {
      this.options.onRejected?.('rate');
      throw problems.tooManyRequests(
        `this API key may ask ${this.options.ratePerSecond} questions per second`,
        verdict.retryAfterMs,
      );
    }
  }

  /** Refuses a question that would exceed the instance's bound on questions in flight. */
  checkCapacity(): void {
    if (this.options.inFlight() >= this.options.maxInFlight) {
      this.options.onRejected?.('in_flight');
      throw problems.tooManyRequests(
        `this instance is answering ${this.options.maxInFlight} questions; retry shortly`,
        1_000,
      );
    }
  }
}
