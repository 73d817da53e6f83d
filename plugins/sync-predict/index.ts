import { definePlugin } from '../../core/plugins/index.js';
import { createHandlers } from './handlers.js';

/**
 * The spec serves these under `{gate}`; the platform's public SDK REST client calls them under
 * `{gateway}`, so both prefixes lead to the same handlers.
 */
const PREFIXES = ['/api/platformgate', '/api/platformgateway'];
const SERVICE = '/account/:account/model/:model';

/**
 * Synchronous predict (spec 4.2), authenticated by the `PLATFORM-API-KEY` header: the caller waits
 * for the service's answer, which is returned as the service gave it (body, status, headers). The
 * caller going away cancels the request at the service.
 *
 * - `POST …/predict-with-config`: PredictRequestData (`data` object, `config` object, `dataType`).
 * - `POST …/predict`: the raw body in the service's format; query `configId` and `dataType`.
 * - `POST …/predict-with-config-v2`: Predict2RequestData (`data` and `config` as strings).
 * - `POST …/ext`: `{methodName, params}`, the service's extended method.
 */
export default definePlugin({
  name: 'sync-predict',
  description: 'POST /api/platformgate[way]/account/{account}/model/{model}/predict[-with-config[-v2]] and /ext',
  configSchema: { type: 'object', additionalProperties: false, properties: {} },
  routes(router, ctx) {
    const handlers = createHandlers(ctx);
    const admitted = ctx.admission.service();
    for (const prefix of PREFIXES) {
      router.post(`${prefix}${SERVICE}/predict`, admitted, handlers.predict);
      router.post(`${prefix}${SERVICE}/predict-with-config`, admitted, handlers.predictWithConfig);
      router.post(`${prefix}${SERVICE}/predict-with-config-v2`, admitted, handlers.predictWithConfigV2);
      router.post(`${prefix}${SERVICE}/ext`, admitted, handlers.ext);
    }
  },
});
