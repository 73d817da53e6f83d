/**
 * A custom plugin, loaded from a path in the config (`plugins.custom: [{ path: ... }]`). It adds
 * `POST /api/custom/shout/{account}/{model}`: the caller's text goes to the service upper-cased, and
 * the service's JSON answer comes back wrapped with the configured greeting. It shows the whole
 * plugin API: options with a schema, the shared pipeline (auth, limits, access), dispatch through
 * the Gate, and errors thrown from the one catalog.
 */
import { definePlugin, gatewayError } from '../../core/plugins/index.js';

interface ShoutOptions {
  greeting: string;
}

export default definePlugin<ShoutOptions>({
  name: 'shout',
  description: 'Upper-cases text before it reaches a service',
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: { greeting: { type: 'string', default: 'HELLO' } },
  },
  routes(router, ctx) {
    router.post('/api/custom/shout/:account/:model', async (koa) => {
      const { caller, service } = ctx.pipeline.admit({
        apiKey: koa.get('PLATFORM-API-KEY'),
        keyHeader: 'PLATFORM-API-KEY',
        permission: 'MODEL_REQUESTS',
        account: koa.params.account!,
        model: koa.params.model!,
      });
      const body = (await ctx.http.readJson(koa)) as { text?: unknown };
      if (typeof body.text !== 'string')
        throw gatewayError('VALIDATION_FAILED', { param: 'text', args: { reason: 'text must be a string' } });

      const call = ctx.gate.open(
        service,
        { predict: { data: { json: JSON.stringify({ text: body.text.toUpperCase() }) } } },
        {
          // Who calls, the request's headers for the service, and its record and trace (access log, timings, spans).
          context: ctx.http.callContext(koa, caller, service),
        },
      );
      const answer = await call.final();
      const json = answer.predict?.data?.json ?? answer.partialPredict?.data?.json ?? 'null';
      koa.body = { greeting: ctx.options.greeting, answer: JSON.parse(json) as unknown };
    });
  },
});
