/**
 * The response store of one gateway, opened on first use on the storage the core opened (MongoDB or
 * memory), with the async results' retention.
 */
import { type PluginContext } from '../../../core/plugins/index.js';
import { MongoResponseStore } from './mongo-store.js';
import { MemoryResponseStore, type ResponseStore } from './store.js';

const DAY_MS = 24 * 60 * 60 * 1000;

export class ResponseStoreHolder {
  readonly #ctx: PluginContext<any>;
  #opening: Promise<ResponseStore> | undefined;

  constructor(ctx: PluginContext<any>) {
    this.#ctx = ctx;
  }

  get(): Promise<ResponseStore> {
    this.#opening ??= this.#open();
    // A failed open is tried again by the next request instead of failing every later one.
    this.#opening.catch(() => (this.#opening = undefined));
    return this.#opening;
  }

  async #open(): Promise<ResponseStore> {
    const { config, logger, storage } = this.#ctx;
    const retentionMs = config.store.resultRetentionDays * DAY_MS;
    return storage.open<ResponseStore>({
      memory: () => new MemoryResponseStore(retentionMs),
      mongodb: (connection) => MongoResponseStore.open(connection, retentionMs, (message, err) => logger.warn({ err }, message)),
    });
  }

  async close(): Promise<void> {
    const opening = this.#opening;
    this.#opening = undefined;
    if (opening) await (await opening.catch(() => undefined))?.close();
  }
}
