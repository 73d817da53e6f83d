import type { Caller } from '../directory.js';
import { gatewayError } from '../../errors.js';

/** Bytes an account keeps stored in one kind of storage (async tasks, datasets, …). */
export type StorageMeter = (accountId: number) => Promise<number>;

/**
 * Per-account cap on bytes kept stored: async task bodies and results, datasets, and whatever else a
 * plugin meters. Checked before each write that adds data (413 STORAGE_QUOTA_EXCEEDED, nothing
 * stored); results a service sends later count against the next write. Concurrent writes of one
 * account may overshoot by their own sizes: the check and the write are not one transaction.
 */
export class StorageQuota {
  readonly #meters: StorageMeter[] = [];
  readonly limit: number;

  constructor(limit: number) {
    this.limit = limit;
  }

  addMeter(meter: StorageMeter): void {
    this.#meters.push(meter);
  }

  /** Bytes the account keeps stored, over every meter. */
  async used(accountId: number): Promise<number> {
    let used = 0;
    for (const meter of this.#meters) used += await meter(accountId);
    return used;
  }

  /** Throws 413 when storing `adding` more bytes would take the caller's account past the quota. */
  async check(caller: Caller, adding: number): Promise<void> {
    const refuse = (used: number) =>
      gatewayError('STORAGE_QUOTA_EXCEEDED', { args: { account: caller.account.name, limit: this.limit, used } });
    if (adding > this.limit) throw refuse(0);
    const used = await this.used(caller.account.id);
    if (used + adding > this.limit) throw refuse(used);
  }
}
