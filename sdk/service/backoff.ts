export interface BackoffOptions {
  /** First delay in ms (default 100). */
  initialMs?: number;
  /** Largest delay in ms (default 5000). */
  maxMs?: number;
  /** Growth factor per failed attempt (default 2). */
  multiplier?: number;
  /** Random spread as a fraction of the delay, 0..1 (default 0.2), so that many services do not reconnect in step. */
  jitter?: number;
}

/** Exponential reconnect delays: initialMs, growing by multiplier up to maxMs; reset() after a healthy connection. */
export class Backoff {
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly multiplier: number;
  private readonly jitter: number;
  private current: number;

  constructor(options: BackoffOptions = {}) {
    this.initialMs = Math.max(0, options.initialMs ?? 100);
    this.maxMs = Math.max(this.initialMs, options.maxMs ?? 5000);
    this.multiplier = Math.max(1, options.multiplier ?? 2);
    this.jitter = Math.min(1, Math.max(0, options.jitter ?? 0.2));
    this.current = this.initialMs;
  }

  /** The delay before the next attempt; each call grows the one after it. */
  next(): number {
    const base = this.current;
    this.current = Math.min(this.maxMs, this.current * this.multiplier);
    const spread = base * this.jitter * (Math.random() * 2 - 1);
    return Math.max(0, Math.min(this.maxMs, Math.round(base + spread)));
  }

  reset(): void {
    this.current = this.initialMs;
  }
}
