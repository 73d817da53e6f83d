import { createHash } from 'node:crypto';
import type { Context } from 'koa';
import { definePlugin, gatewayError, type Registry } from '../../core/plugins/index.js';

const PREFIX = '/api/platformcore';

/** A response body serialised once, with its ETag. */
interface Cached {
  readonly body: string;
  readonly etag: string;
}

function cache(value: unknown): Cached {
  const body = JSON.stringify(value);
  return { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
}

/**
 * Every body the registry can answer, serialised once at boot: the registry never changes while the
 * gateway runs, so a request is two map lookups and a write.
 */
function buildBodies(registry: Registry) {
  const providers = cache({ providers: registry.providers() });
  const models = new Map<string, Cached>();
  const model = new Map<string, Cached>();
  const schema = new Map<string, Cached>();
  for (const provider of registry.providers()) {
    const list = registry.models(provider.name) ?? [];
    models.set(provider.name, cache({ models: list }));
    for (const m of list) {
      const key = `${provider.name}\u0000${m.name}`;
      model.set(key, cache(m));
      schema.set(key, cache(registry.configSchema(provider.name, m.name)));
    }
  }
  return { providers, models, model, schema };
}

function send(ctx: Context, cached: Cached): void {
  ctx.set('ETag', cached.etag);
  ctx.set('Cache-Control', 'no-cache');
  ctx.type = 'application/json';
  ctx.status = 200;
  if (ctx.fresh) {
    ctx.status = 304;
    return;
  }
  ctx.body = cached.body;
}

/**
 * The model registry (spec 4.3), readable without authentication: providers, the models of each
 * provider with their parameter definitions, one model, and (beyond the spec) the JSON Schema the
 * gateway compiled for a model's variables, so clients can validate a config before sending it.
 */
export default definePlugin({
  name: 'model-registry',
  description: 'GET /api/platformcore/providers[/{provider}/models[/{model}[/schema]]]: the model registry, no authentication',
  configSchema: { type: 'object', additionalProperties: false, properties: {} },
  routes(router, { registry }) {
    const bodies = buildBodies(registry);
    const providerBody = (ctx: Context) => {
      const provider = ctx.params.providerName!;
      const found = bodies.models.get(provider);
      if (!found) throw gatewayError('PROVIDER_NOT_FOUND', { param: 'providerName', args: { provider } });
      return found;
    };
    const modelBody = (ctx: Context, from: Map<string, Cached>) => {
      providerBody(ctx);
      const provider = ctx.params.providerName!;
      const model = ctx.params.modelName!;
      const found = from.get(`${provider}\u0000${model}`);
      if (!found) throw gatewayError('REGISTRY_MODEL_NOT_FOUND', { param: 'modelName', args: { provider, model } });
      return found;
    };

    router.get(`${PREFIX}/providers`, (ctx) => send(ctx, bodies.providers));
    router.get(`${PREFIX}/providers/:providerName/models`, (ctx) => send(ctx, providerBody(ctx)));
    router.get(`${PREFIX}/providers/:providerName/models/:modelName`, (ctx) => send(ctx, modelBody(ctx, bodies.model)));
    router.get(`${PREFIX}/providers/:providerName/models/:modelName/schema`, (ctx) => send(ctx, modelBody(ctx, bodies.schema)));
  },
});
