import { definePlugin } from '../../core/plugins/index.js';
import { configSchema, type FittingOptions } from './options.js';
import { mountRoutes } from './routes.js';
import { FittingRuntime } from './runtime.js';

/**
 * Fitting (spec 4.4): derived services made from fittable services, datasets, and fitting jobs that
 * send `fit` to an instance of the base service and follow its progress. A fitted derived service is
 * called like any service; the Gate sends its requests to the base service's instances with the
 * fitted model's directory (see docs/fitting.md).
 */
export default definePlugin<FittingOptions>({
  name: 'fitting',
  description: 'Derived services, datasets, fitting jobs and fit configs under /api/platformgate',
  configSchema,
  create(ctx) {
    // This gateway's fitting store, job runner and sweeps.
    const runtime = new FittingRuntime(ctx);
    return {
      routes(router) {
        // Datasets count against the account's storage quota (limits.storageBytesPerAccount).
        ctx.pipeline.addStorageMeter(async (accountId) => {
          const { store } = runtime.opened;
          let bytes = 0;
          for (const d of await store.listDatasets(accountId)) bytes += d.size + (d.targetsSize ?? 0);
          return bytes;
        });
        mountRoutes(router, runtime);
      },
      start: () => runtime.start(),
      stop: () => runtime.close(),
    };
  },
});
