import { definePlugin } from '../../core/plugins/index.js';

/**
 * Liveness and readiness for load balancers and operators: `GET /health` answers 200 while the
 * gateway runs, with the number of connected instances per service (no secrets, no auth).
 */
export default definePlugin({
  name: 'health',
  description: 'GET /health: liveness plus connected service instances',
  routes(router, ctx) {
    router.get('/health', (koa) => {
      const instances: Record<string, number> = {};
      for (const instance of ctx.gate.instances()) {
        const service = ctx.directory.serviceById(instance.serviceId);
        const key = service ? `${service.account.name}/${service.name}` : String(instance.serviceId);
        if (instance.state === 'serving') instances[key] = (instances[key] ?? 0) + 1;
      }
      koa.body = { status: 'ok', instances };
    });
  },
});
