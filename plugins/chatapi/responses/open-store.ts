/**
 * The response store of one gateway, opened on first use on the storage the core opened (embedded,
 * MongoDB or memory), with the adapter's `responses` limits; its expired records go by the store's
 * sweeper.
 */
import { type PluginContext } from '../../../core/plugins/index.js';
import type { ResponsesOptions } from './options.js';
import { DocResponseStore, type ResponseStore, type ResponseStoreLimits } from './store.js';

const DAY_MS = 24 * 60 * 60 * 1000;

export class ResponseStoreHolder {
  readonly #ctx: PluginContext<any>;
  readonly #options: ResponsesOptions;
  #opening: Promise<ResponseStore> | undefined;
  #stopSweep: (() => void) | undefined;

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
    const { storage } = this.#ctx;
    const limits: ResponseStoreLimits = { retentionMs: this.#options.retentionDays * DAY_MS, maxPerAccount: this.#options.maxPerAccount };
    const store = await storage.open<DocResponseStore>({ docs: (docs) => DocResponseStore.open(docs, limits) });
    this.#stopSweep?.();
    this.#stopSweep = storage.sweep('stored responses', 3_600_000, () => store.purgeExpired());
    return store;
  }

  async close(): Promise<void> {
    const opening = this.#opening;
    this.#opening = undefined;
    this.#stopSweep?.();
    this.#stopSweep = undefined;
    if (opening) await (await opening.catch(() => undefined))?.close();
  }
}
