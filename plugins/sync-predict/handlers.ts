import type { Context } from 'koa';
import {
  binaryMediaType,
  collectAnswer,
  callerOf,
  serviceOf,
  gatewayError,
  readPredict2RequestData,
  readPredictQuery,
  readPredictRequestData,
  servedByHeader,
  type Caller,
  type GateRequest,
  type PayloadProto,
  type PluginContext,
  type ServiceEntry,
  utf8Text,
} from '../../core/plugins/index.js';
import { writeAnswer } from './answer.js';
import { createExtReader, extParams } from './ext-request.js';

export type Handler = (ctx: Context) => Promise<void>;

/**
 * The synchronous predict handlers, mounted after `admission.service()` (401, 402, 403, 429, 400 for
 * an unknown account or service, 403 for another account's private service). Each reads and checks
 * its body, validates the predict config against the registry, and waits for the service.
 */
export function createHandlers(plugin: PluginContext): Record<'predict' | 'predictWithConfig' | 'predictWithConfigV2' | 'ext', Handler> {
  const { pipeline, gate, http, dataTypes } = plugin;
  const maxAnswerBytes = plugin.config.gate.maxAnswerBytes;
  const { extMaxParams, extMaxParamBytes } = plugin.config.limits;
  const readExt = createExtReader(http, { maxExtParams: extMaxParams, maxExtParamBytes: extMaxParamBytes });

  const admitted = (ctx: Context) => ({ caller: callerOf(ctx), service: serviceOf(ctx) });

  const dispatch = async (ctx: Context, caller: Caller, service: ServiceEntry, request: GateRequest) => {
    // The caller leaving ends a wait for an instance (and frees its place among the account's waiters).
    await gate.ready(service, caller.account, () => http.closeSignal(ctx));
    const call = gate.open(service, request, { context: http.callContext(ctx, caller, service) });
    http.cancelOnClose(ctx, call);
    writeAnswer(ctx, await collectAnswer(call, service.name, maxAnswerBytes));
    if (call.servedBy) ctx.set('x-served-by', servedByHeader(call.servedBy));
  };

  return {
    /** `predict`: the raw body in the service's format; query configId and dataType. */
    async predict(ctx) {
      const { caller, service } = admitted(ctx);
      const query = readPredictQuery(ctx.query);
      const raw = await http.readRawBody(ctx);
      if (raw.length === 0)
        throw gatewayError('VALIDATION_FAILED', {
          param: 'body',
          args: { reason: "the body is empty; send the predict data in the service's format" },
        });
      // Text goes as a json payload; a binary Content-Type, or bytes that are not UTF-8, as protobuf
      // bytes: either way the service gets the bytes as sent (a json string would replace bad UTF-8).
      const text = binaryMediaType(ctx.get('content-type')) === undefined ? utf8Text(raw) : undefined;
      const data: PayloadProto = text === undefined ? { protobuf: raw } : { json: text };
      if (query.dataType) data.dataType = query.dataType;
      const check = dataTypes.checkFor(query.dataType, ctx.origin);
      if (check) {
        if (text === undefined)
          throw gatewayError('DATA_TYPE_MISMATCH', {
            param: 'body',
            args: { param: 'body', dataType: query.dataType, reason: 'a binary or non-UTF-8 body is not JSON' },
          });
        check(http.parseJson(text, 'body'));
      }
      const config = pipeline.predictConfig(service, undefined, { configId: query.configId });
      await dispatch(ctx, caller, service, { predict: { data, config: config.json === undefined ? undefined : { json: config.json } } });
    },

    /** `predict-with-config`: PredictRequestData, data and config as objects. */
    async predictWithConfig(ctx) {
      const { caller, service } = admitted(ctx);
      const body = readPredictRequestData(await http.readJson(ctx));
      dataTypes.checkFor(body.dataType, ctx.origin)?.(body.data);
      const config = pipeline.predictConfig(service, body.config);
      const data: PayloadProto = { json: JSON.stringify(body.data) };
      if (body.dataType) data.dataType = body.dataType;
      await dispatch(ctx, caller, service, { predict: { data, config: config.json === undefined ? undefined : { json: config.json } } });
    },

    /** `predict-with-config-v2`: data and config as strings, passed on as sent. */
    async predictWithConfigV2(ctx) {
      const { caller, service } = admitted(ctx);
      const body = readPredict2RequestData(await http.readJson(ctx));
      const check = dataTypes.checkFor(body.dataType, ctx.origin);
      if (check) check(http.parseJson(body.data, 'data'));
      const own = body.config ? http.parseJson(body.config, 'config') : undefined;
      const config = pipeline.predictConfig(service, own, { text: body.config ?? undefined });
      const data: PayloadProto = { json: body.data };
      if (body.dataType) data.dataType = body.dataType;
      await dispatch(ctx, caller, service, { predict: { data, config: config.json ? { json: config.json } : undefined } });
    },

    /** `ext`: a call of the service's extended method. */
    async ext(ctx) {
      const { caller, service } = admitted(ctx);
      const body = await readExt(ctx);
      await dispatch(ctx, caller, service, { ext: { methodName: body.methodName, params: extParams(body.params) } });
    },
  };
}
