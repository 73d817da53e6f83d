/**
 * Derived services in the Directory, so that every plugin (sync, async, chat, gRPC) resolves them by
 * ID or name like configured services. Each entry copies its base service's settings and carries
 * `base`: the Gate then sends its requests to the base service's instances with the fitted model's
 * directory (core/gate/gate.ts).
 */
import type { PluginContext, ServiceEntry } from '../../core/plugins/index.js';
import type { DerivedServiceRecord } from './store/fitting-store.js';

export class DerivedServices {
  readonly #ctx: PluginContext<unknown>;
  /** IDs this plugin put in the Directory. */
  readonly #registered = new Set<number>();

  constructor(ctx: PluginContext<unknown>) {
    this.#ctx = ctx;
  }

  /** The Directory entry of a derived service; undefined when its owner or base service is gone. */
  entryOf(record: DerivedServiceRecord): ServiceEntry | undefined {
    const { directory } = this.#ctx;
    const account = directory.findAccount(record.accountId);
    const base = directory.serviceById(record.baseServiceId);
    if (!account || !base || base.base) return undefined;
    return {
      id: record.id,
      name: record.name,
      accountId: record.accountId,
      account,
      public: false,
      connectionTokenHashes: [],
      timeoutSec: base.timeoutSec,
      provider: base.provider,
      defaultModel: base.defaultModel,
      family: base.family,
      batch: base.batch,
      fittable: false,
      configs: base.configs,
      fitConfigs: [],
      base: { serviceId: base.id, modelDir: record.modelDir ?? '', ready: record.modelDir !== null },
    };
  }

  /** Adds or updates the service's entry; false (with a warning) when it cannot be served. */
  register(record: DerivedServiceRecord): boolean {
    const { directory, logger } = this.#ctx;
    const entry = this.entryOf(record);
    if (!entry) {
      logger.warn(
        { serviceId: record.id, baseServiceId: record.baseServiceId, accountId: record.accountId },
        'derived service not served: its account or base service is no longer configured',
      );
      return false;
    }
    const sameId = directory.serviceById(record.id);
    const sameName = directory.findService(entry.account, record.name);
    if ((sameId && !this.#registered.has(sameId.id)) || (sameName && sameName.id !== record.id)) {
      logger.error({ serviceId: record.id, name: record.name }, 'derived service not served: a configured service has its ID or name');
      return false;
    }
    if (sameId && sameId.name !== record.name) directory.removeService(record.id);
    directory.addService(entry);
    this.#registered.add(record.id);
    return true;
  }

  unregister(id: number): void {
    if (!this.#registered.delete(id)) return;
    this.#ctx.directory.removeService(id);
  }

  /** Makes the Directory's derived services exactly `records` (boot, and the MongoDB sync). */
  reconcile(records: readonly DerivedServiceRecord[]): void {
    const seen = new Set<number>();
    for (const record of records) {
      seen.add(record.id);
      const current = this.#ctx.directory.serviceById(record.id);
      if (current && this.#registered.has(record.id) && sameState(current, record)) continue;
      this.register(record);
    }
    for (const id of [...this.#registered]) if (!seen.has(id)) this.unregister(id);
  }
}

function sameState(entry: ServiceEntry, record: DerivedServiceRecord): boolean {
  return entry.name === record.name && entry.base?.modelDir === (record.modelDir ?? '') && entry.base?.ready === (record.modelDir !== null);
}
