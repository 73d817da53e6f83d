/**
 * The response store of one gateway, opened on first use on the storage the core opened (MongoDB or
 * memory), with the adapter's `responses` limits.
 */
import { type PluginContext } from '../../../core/plugins/index.js';
import { MongoResponseStore } from './mongo-store.js';
import type { ResponsesOptions } from './options.js';
import { MemoryResponseStore, type ResponseStore, type ResponseStoreLimits } from './store.js';

const DAY_MS = 24 * 60 * 60 * 1000;

export class ResponseStoreHolder {
  readonly #ctx: PluginContext<any>;
  readonly #options: ResponsesOptions;
  #opening: Promise<ResponseStore> | undefined;

  constructor(ctx: PluginContext<any>, options: ResponsesOptions) {
    this.#ctx = ctx;
    this.#options = options;
  }

  get(): Promise<ResponseStore> {
    this.#opening ??= this.#open();
    // A failed open is tried again by the next request instead of failing every later one.
    this.#opening.catch(() => (this.#opening = undefined));
    return this.#opening;
  }

  async #open(): Promise<ResponseStore> {
    const { logger, storage } = this.#ctx;
    const limits: ResponseStoreLimits = { retentionMs: this.#options.retentionDays * DAY_MS, maxPerAccount: this.#options.maxPerAccount };
    return storage.open<ResponseStore>({
      memory: () => new MemoryResponseStore(limits),
      mongodb: (connection) => MongoResponseStore.open(connection, limits, (message, err) => logger.warn({ err }, message)),
    });
  }

  async close(): Promise<void> {
    const opening = this.#opening;
    this.#opening = undefined;
    if (opening) await (await opening.catch(() => undefined))?.close();
  }
}
