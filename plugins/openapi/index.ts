import { definePlugin } from '../../core/plugins/index.js';
import { bundledDocument, forPlugins } from './document.js';

/**
 * `GET /openapi.json`: the OpenAPI 3.1 document of this gateway's HTTP API (schemas/openapi.yaml),
 * limited to the enabled built-in plugins, with this gateway's public URL as its server. Built once,
 * on the first request (the public URL is known only once the gateway listens).
 */
export default definePlugin({
  name: 'openapi',
  description: 'GET /openapi.json: the OpenAPI 3.1 document of the enabled plugins',
  configSchema: { type: 'object', additionalProperties: false, properties: {} },
  routes(router, ctx) {
    const full = bundledDocument();
    let body: string | undefined;
    router.get('/openapi.json', (koa) => {
      body ??= JSON.stringify(forPlugins(full, new Set(ctx.config.plugins.enabled), ctx.specsUrl.replace(/\/specs$/, '')));
      koa.type = 'application/json';
      koa.set('Cache-Control', 'public, max-age=300');
      koa.body = body;
    });
  },
});
