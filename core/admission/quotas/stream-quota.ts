import type { Caller } from '../directory.js';
import { gatewayError } from '../../errors.js';

/**
 * Per-account cap on streaming calls held open at once on this gateway (recognition, synthesis,
 * response and request streams). A stream holds an instance's attention for as long as the caller
 * likes, so without a cap 200 idle recognition streams from one account starved a service for
 * everyone; with it, the account gets 429 TOO_MANY_CONCURRENT_STREAMS and other accounts keep
 * being served. One counter per account with open streams; nothing is kept for idle accounts.
 */
export class StreamQuota {
  readonly #open = new Map<number, number>();
  readonly limit: number;

  constructor(limit: number) {
    this.limit = limit;
  }

  /**
   * Takes one of the caller's stream slots, or throws 429. Returns the release, which is safe to call
   * more than once (streams end through several paths: end, error, cancel).
   */
  acquire(caller: Caller): () => void {
    const accountId = caller.account.id;
    const open = this.#open.get(accountId) ?? 0;
    if (open >= this.limit) {
      throw gatewayError('TOO_MANY_CONCURRENT_STREAMS', { args: { account: caller.account.name, limit: this.limit } });
    }
    this.#open.set(accountId, open + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const now = (this.#open.get(accountId) ?? 1) - 1;
      if (now <= 0) this.#open.delete(accountId);
      else this.#open.set(accountId, now);
    };
  }

  /** Streams the account holds open now. */
  openFor(accountId: number): number {
    return this.#open.get(accountId) ?? 0;
  }
}
