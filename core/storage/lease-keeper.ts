import { every } from '../flow/timers.js';

/**
 * Keeps the leases of one process alive: async tasks its workers run, fitting jobs it runs. One timer
 * for all of them; each tick renews every held lease in one batched store write, fenced (the store
 * renews a lease only for its holder: the claim's token, the job's runner), and tells the holder of
 * each lease the store refused that it is lost (canceled, expired, or taken over elsewhere), so the
 * work stops and writes nothing. A failed renewal is retried at the next tick; the interval is kept
 * well inside the lease (a third of it) so one failure does not lose a lease.
 */
export interface LeaseKeeperOptions<L> {
  /** How often the held leases are renewed. */
  intervalMs: number;
  /** Renews `leases` in one batch; returns those the store still holds for us. */
  renew(leases: readonly L[]): Promise<ReadonlySet<L>>;
  /** A renewal failed (a database hiccup); the leases stay held and the next tick tries again. */
  onError?(err: unknown): void;
}

export class LeaseKeeper<L> {
  readonly #options: LeaseKeeperOptions<L>;
  /** Each held lease and what to do when it is lost. */
  readonly #held = new Map<L, () => void>();
  #stopTimer: (() => void) | undefined;
  #renewing: Promise<void> | undefined;

  constructor(options: LeaseKeeperOptions<L>) {
    this.#options = options;
  }

  get size(): number {
    return this.#held.size;
  }

  /** Renews `lease` from the next tick on until it is released; `onLost` runs once if the store refuses it. */
  hold(lease: L, onLost: () => void): void {
    this.#held.set(lease, onLost);
    this.#stopTimer ??= every(this.#options.intervalMs, () => this.renewNow());
  }

  /** Stops renewing `lease` (its work ended); the timer stops with the last lease. */
  release(lease: L): void {
    this.#held.delete(lease);
    if (this.#held.size === 0) this.#stop();
  }

  /** One batched renewal of every held lease (the timer's tick). Overlapping ticks are skipped. */
  renewNow(): Promise<void> {
    if (this.#renewing || this.#held.size === 0) return this.#renewing ?? Promise.resolve();
    this.#renewing = this.#renew().finally(() => (this.#renewing = undefined));
    return this.#renewing;
  }

  /** Stops the timer and forgets every lease (they run out in the store and are taken over). */
  close(): void {
    this.#held.clear();
    this.#stop();
  }

  async #renew(): Promise<void> {
    const batch = [...this.#held.keys()];
    let held: ReadonlySet<L>;
    try {
      held = await this.#options.renew(batch);
    } catch (err) {
      this.#options.onError?.(err);
      return;
    }
    for (const lease of batch) {
      if (held.has(lease)) continue;
      const onLost = this.#held.get(lease); // undefined when released during the renewal
      if (!onLost) continue;
      this.#held.delete(lease);
      onLost();
    }
    if (this.#held.size === 0) this.#stop();
  }

  #stop(): void {
    this.#stopTimer?.();
    this.#stopTimer = undefined;
  }
}
