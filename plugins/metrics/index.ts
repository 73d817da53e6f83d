import { createHash, timingSafeEqual } from 'node:crypto';
import type Router from '@koa/router';
import { definePlugin, gatewayError, shareMetricsWithWorkers, workersMetrics, type PluginContext } from '../../core/plugins/index.js';
import { GatewayMetrics } from './gateway-metrics.js';
import { configSchema, type MetricsOptions } from './options.js';

const digest = (text: string) => createHash('sha256').update(text).digest();

/**
 * Prometheus metrics at `GET /metrics` (docs/operations.md lists them): requests, durations and the
 * gateway's own overhead, service calls and streams, tokens and charges, instances, async tasks,
 * fitting jobs, rejections, and the process. Behind a bearer token unless the operator says
 * `unauthenticated: true`: they name every account and private service.
 */
export default definePlugin<MetricsOptions>({
  name: 'metrics',
  description: 'GET /metrics: Prometheus metrics of the gateway (prom-client)',
  configSchema,
  create(ctx) {
    const metrics = new GatewayMetrics(ctx);
    return {
      routes: (router) => mountMetrics(router, ctx, metrics),
      stop: () => metrics.close(),
    };
  },
});

/** `GET <path>`: this gateway's metrics (or, with several workers, every worker's). */
function mountMetrics(router: Router, ctx: PluginContext<MetricsOptions>, metrics: GatewayMetrics): void {
  // With several workers the primary sums every worker's figures: any worker answers for all.
  const aggregated = shareMetricsWithWorkers([metrics.registry]);
  const expected = ctx.options.bearerToken === undefined ? undefined : digest(ctx.options.bearerToken);
  router.get(ctx.options.path, async (koa) => {
    if (expected) {
      const given = /^Bearer (.+)$/i.exec(koa.get('authorization'))?.[1];
      if (!given) throw gatewayError('API_KEY_MISSING', { args: { header: 'Authorization' } });
      // Digests of equal length, compared in constant time.
      if (!timingSafeEqual(digest(given), expected)) throw gatewayError('API_KEY_INVALID');
    }
    if (aggregated) {
      const { text, contentType } = await workersMetrics();
      koa.type = contentType;
      koa.body = text;
      return;
    }
    koa.type = metrics.registry.contentType;
    koa.body = await metrics.registry.metrics();
  });
}
