import type { Context } from 'koa';
import {
  binaryMediaType,
  compileRequestSchema,
  gatewayError,
  parseJsonText,
  readPredict2RequestData,
  readPredictQuery,
  readPredictRequestData,
  servedByHeader,
  type Caller,
  type GateRequest,
  type PayloadProto,
  type PluginContext,
  type ServiceEntry,
} from '../../core/plugins/index.js';
import extSchema from '../../schemas/sync-predict/ext.schema.json' with { type: 'json' };
import { collectAnswer, writeAnswer } from './answer.js';

export const KEY_HEADER = 'PLATFORM-API-KEY';

interface ExtRequestData {
  methodName: string;
  params: Record<string, string>;
}

export type Handler = (ctx: Context) => Promise<void>;

/**
 * The synchronous predict handlers. Each runs the admission stages first (401, 402, 403, 429, 400
 * for an unknown account or service, 403 for another account's private service), then reads and
 * checks its body, validates the predict config against the registry, and waits for the service.
 */
export function createHandlers(plugin: PluginContext): Record<'predict' | 'predictWithConfig' | 'predictWithConfigV2' | 'ext', Handler> {
  const { pipeline, gate, http, dataTypes } = plugin;
  const readExt = compileRequestSchema<ExtRequestData>(extSchema);

  const admit = (ctx: Context) =>
    pipeline.admit({
      apiKey: ctx.get(KEY_HEADER) || undefined,
      keyHeader: KEY_HEADER,
      permission: 'MODEL_REQUESTS',
      account: ctx.params.account!,
      model: ctx.params.model!,
    });

  const dispatch = async (ctx: Context, caller: Caller, service: ServiceEntry, request: GateRequest) => {
    const call = gate.open(service, request, { headers: http.serviceHeaders(ctx, caller) });
    http.cancelOnClose(ctx, call);
    writeAnswer(ctx, await collectAnswer(call, service.name));
    if (call.servedBy) ctx.set('x-served-by', servedByHeader(call.servedBy));
  };

  return {
    /** `predict`: the raw body in the service's format; query configId and dataType. */
    async predict(ctx) {
      const { caller, service } = admit(ctx);
      const query = readPredictQuery(ctx.query);
      const raw = await http.readRawBody(ctx);
      if (raw.length === 0) throw gatewayError('VALIDATION_FAILED', { param: 'body', args: { reason: 'the body is empty; send the predict data in the service\'s format' } });
      const binary = binaryMediaType(ctx.get('content-type')) !== undefined;
      const data: PayloadProto = binary ? { protobuf: raw } : { json: raw.toString('utf8') };
      if (query.dataType) data.dataType = query.dataType;
      const check = dataTypes.checkFor(query.dataType, ctx.origin);
      if (check) {
        if (binary) throw gatewayError('DATA_TYPE_MISMATCH', { param: 'body', args: { param: 'body', dataType: query.dataType, reason: 'a binary body is not JSON' } });
        check(parseJsonText(data.json!, 'body'));
      }
      const config = pipeline.predictConfig(service, undefined, { configId: query.configId });
      await dispatch(ctx, caller, service, { predict: { data, config: config.json === undefined ? undefined : { json: config.json } } });
    },

    /** `predict-with-config`: PredictRequestData, data and config as objects. */
    async predictWithConfig(ctx) {
      const { caller, service } = admit(ctx);
      const body = readPredictRequestData(await http.readJson(ctx));
      dataTypes.checkFor(body.dataType, ctx.origin)?.(body.data);
      const config = pipeline.predictConfig(service, body.config);
      const data: PayloadProto = { json: JSON.stringify(body.data) };
      if (body.dataType) data.dataType = body.dataType;
      await dispatch(ctx, caller, service, { predict: { data, config: config.json === undefined ? undefined : { json: config.json } } });
    },

    /** `predict-with-config-v2`: data and config as strings, passed on as sent. */
    async predictWithConfigV2(ctx) {
      const { caller, service } = admit(ctx);
      const body = readPredict2RequestData(await http.readJson(ctx));
      const check = dataTypes.checkFor(body.dataType, ctx.origin);
      if (check) check(parseJsonText(body.data, 'data'));
      const own = body.config ? parseJsonText(body.config, 'config') : undefined;
      const config = pipeline.predictConfig(service, own, { text: body.config ?? undefined });
      const data: PayloadProto = { json: body.data };
      if (body.dataType) data.dataType = body.dataType;
      await dispatch(ctx, caller, service, { predict: { data, config: config.json ? { json: config.json } : undefined } });
    },

    /** `ext`: a call of the service's extended method. */
    async ext(ctx) {
      const { caller, service } = admit(ctx);
      const body = readExt(await http.readJson(ctx));
      await dispatch(ctx, caller, service, { ext: { methodName: body.methodName, params: body.params } });
    },
  };
}
