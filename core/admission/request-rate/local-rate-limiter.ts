/** Decides whether an account (its ID) or an API key (its `key_…` ID) may make one more request now; never waits. */
export interface RequestLimiter {
  tryTake(id: number | string, ratePerSecond: number): boolean;
  close?(): void;
}

/**
 * Per-account requests-per-second limit of one gateway as a token bucket: `rate` tokens a second, bursts up to
 * `rate`. A bucket costs one small object per account; nothing is allocated per request.
 */
export class RateLimiter implements RequestLimiter {
  readonly #buckets = new Map<number | string, { tokens: number; updated: number }>();
  readonly #now: () => number;

  constructor(now: () => number = () => performance.now()) {
    this.#now = now;
  }

  /** Takes one token from the account's bucket; false when the account is over its rate. */
  tryTake(id: number | string, ratePerSecond: number): boolean {
    const now = this.#now();
    let bucket = this.#buckets.get(id);
    if (!bucket) {
      bucket = { tokens: ratePerSecond, updated: now };
      this.#buckets.set(id, bucket);
    }
    bucket.tokens = Math.min(ratePerSecond, bucket.tokens + ((now - bucket.updated) / 1000) * ratePerSecond);
    bucket.updated = now;
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }
}
