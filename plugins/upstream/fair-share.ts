/**
 * An engine's connections (`upstream.maxConcurrency`) shared fairly between the accounts that call
 * it. Without it, requests queued in the connection pool in arrival order: one account sending many
 * slow requests held every connection, and another account's request waited behind all of them.
 * Here an account runs at most `perAccount` engine requests at once (`upstream.maxConcurrencyPerAccount`,
 * by default one less than the connections, so another account always finds one), and when a
 * connection frees up it goes to the waiting account that runs the fewest requests (among equals, the
 * one longest without a turn), each account's own requests in order. Requests of unknown callers share one account.
 */
export class FairShare {
  readonly #limit: number;
  readonly #perAccount: number;
  #running = 0;
  /** Engine requests running, per account (accounts with none are removed). */
  readonly #runningBy = new Map<number, number>();
  /** Waiting requests per account; the Map's order is the turn order (an account served moves last). */
  readonly #waiting = new Map<number, Waiter[]>();

  constructor(limit: number, perAccount: number) {
    this.#limit = limit;
    this.#perAccount = Math.min(perAccount, limit);
  }

  /** Requests waiting for a connection, over all accounts (for tests and the health view). */
  get waiting(): number {
    let n = 0;
    for (const list of this.#waiting.values()) n += list.length;
    return n;
  }

  /** Takes a connection for `account` now when it may have one (no allocation); false: wait() for one. */
  tryTake(account: number): boolean {
    if (this.#running >= this.#limit || this.#runningOf(account) >= this.#perAccount || this.#waiting.has(account)) return false;
    this.#grant(account);
    return true;
  }

  /**
   * Waits for `account`'s turn: resolves true once a connection is taken for it (give it back with
   * release), false when `cancel` was called first (nothing is taken).
   */
  wait(account: number): { readonly turn: Promise<boolean>; cancel(): void } {
    let waiter!: Waiter;
    const turn = new Promise<boolean>((resolve) => (waiter = { resolve }));
    const list = this.#waiting.get(account);
    if (list) list.push(waiter);
    else this.#waiting.set(account, [waiter]);
    this.#dispatch();
    return {
      turn,
      cancel: () => {
        const queued = this.#waiting.get(account);
        const at = queued?.indexOf(waiter) ?? -1;
        if (at < 0) return;
        queued!.splice(at, 1);
        if (queued!.length === 0) this.#waiting.delete(account);
        waiter.resolve(false);
      },
    };
  }

  /** Gives back a connection taken for `account`; the next account in turn gets it. */
  release(account: number): void {
    this.#running--;
    const left = this.#runningOf(account) - 1;
    if (left > 0) this.#runningBy.set(account, left);
    else this.#runningBy.delete(account);
    this.#dispatch();
  }

  /** Ends every wait (the engine is closing): each resolves false. */
  close(): void {
    for (const list of this.#waiting.values()) for (const waiter of list) waiter.resolve(false);
    this.#waiting.clear();
  }

  #runningOf(account: number): number {
    return this.#runningBy.get(account) ?? 0;
  }

  #grant(account: number): void {
    this.#running++;
    this.#runningBy.set(account, this.#runningOf(account) + 1);
  }

  /** Hands free connections to the waiting accounts, fewest running first, skipping those at their share. */
  #dispatch(): void {
    while (this.#running < this.#limit) {
      // The waiting account running the fewest requests; among equals, the one longest without a turn.
      let next: number | undefined;
      let fewest = this.#perAccount;
      for (const account of this.#waiting.keys()) {
        const running = this.#runningOf(account);
        if (running < fewest) {
          next = account;
          fewest = running;
        }
      }
      if (next === undefined) return;
      const list = this.#waiting.get(next)!;
      const waiter = list.shift()!;
      // The account served goes to the end of the turn order.
      this.#waiting.delete(next);
      if (list.length > 0) this.#waiting.set(next, list);
      this.#grant(next);
      waiter.resolve(true);
    }
  }
}

interface Waiter {
  resolve(taken: boolean): void;
}
