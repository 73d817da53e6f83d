import { definePlugin, type PluginContext } from '../../core/plugins/index.js';
import { configSchema, type AsyncPredictOptions } from './options.js';
import { mountRoutes } from './routes.js';
import { WorkerPool } from './worker-pool.js';

/** Per gateway (one process may run several): its worker pool and reaper. */
const running = new WeakMap<PluginContext<AsyncPredictOptions>, { pool: WorkerPool; stopReaper?: () => void }>();

/**
 * Asynchronous predict (spec sections 4.1 and 8): tasks created over HTTP are kept in the task store
 * (`ctx.store`), run by a pool of workers through the Gate, and read back by status and result.
 */
export default definePlugin<AsyncPredictOptions>({
  name: 'async-predict',
  description: 'Async predict tasks: create, status, result, cancel; workers, lease renewal, retention',
  configSchema,
  routes(router, ctx) {
    const pool = new WorkerPool(ctx);
    running.set(ctx, { pool });
    mountRoutes(router, ctx, pool);
  },
  start(ctx) {
    const state = running.get(ctx);
    if (!state) return;
    state.pool.start();
    state.stopReaper = ctx.storage.sweep('async tasks', ctx.options.reaperIntervalMs, () => ctx.store.purgeExpired());
  },
  async close(ctx) {
    const state = running.get(ctx);
    state?.stopReaper?.();
    await state?.pool.close();
  },
});
