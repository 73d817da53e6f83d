import { definePlugin, gatewayError } from '../../core/plugins/index.js';

/**
 * Publishes the gateway's data-type schemas at `{specs_url}` (base URL + `/specs`), so that a
 * `dataType` of the form `{specs_url}/<file>#/<Type>` resolves: `GET /specs/common.json`,
 * `GET /specs/gpt.json`, and `GET /specs` for the list of files.
 *
 * @remarks
 * The schemas themselves, and the check of a request's data against them, live in core
 * (`ctx.dataTypes`, from schemas/specs/), because every predict plugin and the chat adapters need the
 * check whether or not this plugin is enabled; this plugin only serves the files over HTTP, like
 * every other HTTP interface of the gateway.
 */
export default definePlugin({
  name: 'specs',
  description: 'GET /specs/<file>: the published data-type schemas ({specs_url})',
  configSchema: { type: 'object', additionalProperties: false, properties: {} },
  routes(router, { dataTypes }) {
    router.get('/specs', (ctx) => {
      ctx.body = {
        specsUrl: dataTypes.specsUrl,
        files: dataTypes.fileNames().map((name) => ({ name, url: `${dataTypes.specsUrl}/${name}` })),
      };
    });
    router.get('/specs/:file', (ctx) => {
      const text = dataTypes.file(ctx.params.file!);
      if (text === undefined)
        throw gatewayError('ENTITY_NOT_FOUND_BY_ID', { param: 'file', args: { entity: 'data-type file', id: ctx.params.file } });
      ctx.set('Cache-Control', 'public, max-age=300');
      ctx.type = 'application/json';
      ctx.body = text;
    });
  },
});
