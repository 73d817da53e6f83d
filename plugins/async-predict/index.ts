import { definePlugin } from '../../core/plugins/index.js';
import { configSchema, type AsyncPredictOptions } from './options.js';
import { mountRoutes } from './routes.js';
import { WorkerPool } from './worker-pool.js';

/**
 * Asynchronous predict (spec sections 4.1 and 8): tasks created over HTTP are kept in the task store
 * (`ctx.store`), run by a pool of workers through the Gate, and read back by status and result.
 */
export default definePlugin<AsyncPredictOptions>({
  name: 'async-predict',
  description: 'Async predict tasks: create, status, result, cancel; workers, lease renewal, retention',
  configSchema,
  create(ctx) {
    // This gateway's worker pool and task reaper.
    const pool = new WorkerPool(ctx);
    let stopReaper: (() => void) | undefined;
    return {
      routes: (router) => mountRoutes(router, ctx, pool),
      start() {
        pool.start();
        stopReaper = ctx.storage.sweep('async tasks', ctx.options.reaperIntervalMs, () => ctx.store.purgeExpired());
      },
      async stop() {
        stopReaper?.();
        await pool.close();
      },
    };
  },
});
