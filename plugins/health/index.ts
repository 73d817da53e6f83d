import type { Context } from 'koa';
import {
  definePlugin,
  gatewayError,
  PLATFORM_KEY_HEADER,
  type Caller,
  type PluginContext,
  type ServiceEntry,
} from '../../core/plugins/index.js';

const BEARER = /^bearer\s+/i;

/**
 * Probes for load balancers and operators (docs/operations.md):
 * - `GET /health/live`: the process answers (restart it when this fails);
 * - `GET /health/ready`: plugins started, listeners up, the store reachable, not draining (503 otherwise;
 *   take the gateway out of rotation, do not restart it);
 * - `GET /health`: `ok`, or `degraded` with the reasons when a required or launched service has no
 *   connected instance. Service names (and instance counts) only for a caller with a valid API key,
 *   and only of services that caller may call.
 */
export default definePlugin({
  name: 'health',
  description: 'GET /health, /health/live, /health/ready: liveness, readiness and service health',
  routes(router, ctx) {
    router.get('/health/live', (koa) => {
      koa.body = { status: 'live' };
    });

    router.get('/health/ready', async (koa) => {
      const report = await ctx.readiness.check();
      koa.status = report.ready ? 200 : 503;
      koa.body = { status: report.ready ? 'ready' : 'not_ready', checks: report.checks };
    });

    router.get('/health', (koa) => {
      const caller = optionalCaller(koa, ctx);
      const missing = ctx.gate.missingServices();
      const status = missing.length ? 'degraded' : 'ok';
      if (!caller) {
        koa.body = missing.length ? { status, reasons: [`${missing.length} required service(s) have no connected instance`] } : { status };
        return;
      }
      const visible = (service: ServiceEntry) => ctx.pipeline.mayCall(caller, service);
      const reasons = missing.filter(visible).map((s) => `service ${s.account.name}/${s.name} has no connected instance`);
      const hidden = missing.length - reasons.length;
      if (hidden) reasons.push(`${hidden} other required service(s) have no connected instance`);
      koa.body = missing.length
        ? { status, reasons, instances: instanceCounts(ctx, visible) }
        : { status, instances: instanceCounts(ctx, visible) };
    });
  },
});

/** The caller when the request carries an API key (`PLATFORM-API-KEY` or `Authorization`); 401 for a wrong one. */
function optionalCaller(koa: Context, ctx: PluginContext): Caller | undefined {
  const authorization = koa.get('authorization');
  const key = koa.get(PLATFORM_KEY_HEADER) || (authorization && authorization.replace(BEARER, '').trim());
  if (!key) return undefined;
  const caller = ctx.directory.callerForKey(key);
  if (!caller) throw gatewayError('API_KEY_INVALID');
  return caller;
}

/** Serving instances per service the caller may see. */
function instanceCounts(ctx: PluginContext, visible: (service: ServiceEntry) => boolean): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const instance of ctx.gate.instances()) {
    if (instance.state !== 'serving') continue;
    const service = ctx.directory.serviceById(instance.serviceId);
    if (!service || !visible(service)) continue;
    const key = `${service.account.name}/${service.name}`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}
