import type { Context } from 'koa';
import {
  compileRequestSchema,
  gatewayError,
  type Caller,
  type GateRequest,
  type PayloadProto,
  type PluginContext,
  type ServiceEntry,
} from '../../core/plugins/index.js';
import extSchema from '../../schemas/sync-predict/ext.schema.json' with { type: 'json' };
import querySchema from '../../schemas/sync-predict/predict-query.schema.json' with { type: 'json' };
import v2Schema from '../../schemas/sync-predict/predict-with-config-v2.schema.json' with { type: 'json' };
import withConfigSchema from '../../schemas/sync-predict/predict-with-config.schema.json' with { type: 'json' };
import { collectAnswer, writeAnswer } from './answer.js';

export const KEY_HEADER = 'PLATFORM-API-KEY';

interface PredictRequestData {
  data: Record<string, unknown>;
  config?: Record<string, unknown> | null;
  dataType?: string;
}

interface Predict2RequestData {
  data: string;
  config?: string | null;
  dataType?: string;
}

interface ExtRequestData {
  methodName: string;
  params: Record<string, string>;
}

interface PredictQuery {
  configId?: string;
  dataType?: string;
}

/** Content types whose raw body goes to the service as a protobuf payload; any other as JSON text. */
const BINARY_TYPES = ['application/octet-stream', 'application/x-protobuf', 'application/protobuf'];

export type Handler = (ctx: Context) => Promise<void>;

/**
 * The synchronous predict handlers. Each runs the admission stages first (401, 402, 403, 429, 400
 * for an unknown account or service, 403 for another account's private service), then reads and
 * checks its body, validates the predict config against the registry, and waits for the service.
 */
export function createHandlers(plugin: PluginContext): Record<'predict' | 'predictWithConfig' | 'predictWithConfigV2' | 'ext', Handler> {
  const { pipeline, gate, http, dataTypes } = plugin;
  const readWithConfig = compileRequestSchema<PredictRequestData>(withConfigSchema);
  const readV2 = compileRequestSchema<Predict2RequestData>(v2Schema);
  const readExt = compileRequestSchema<ExtRequestData>(extSchema);
  const readQuery = compileRequestSchema<PredictQuery>(querySchema, 'query');

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
  };

  /** The config a request sends: its own, else the service's default named config (maybe none). */
  const effectiveConfig = (service: ServiceEntry, own: unknown): { value: unknown; json: string | undefined } => {
    if (own !== undefined && own !== null) return { value: own, json: undefined };
    const named = pipeline.namedConfig(service, undefined);
    return { value: named, json: named && namedConfigJson(named) };
  };

  return {
    /** `predict`: the raw body in the service's format; query configId and dataType. */
    async predict(ctx) {
      const { caller, service } = admit(ctx);
      const query = readQuery(ctx.query);
      const raw = await http.readRawBody(ctx);
      if (raw.length === 0) throw gatewayError('VALIDATION_FAILED', { param: 'body', args: { reason: 'the body is empty; send the predict data in the service\'s format' } });
      const binary = Boolean(ctx.request.is(BINARY_TYPES));
      const data: PayloadProto = binary ? { protobuf: raw } : { json: raw.toString('utf8') };
      if (query.dataType) data.dataType = query.dataType;
      const check = dataTypes.checkFor(query.dataType, ctx.origin);
      if (check) {
        if (binary) throw gatewayError('DATA_TYPE_MISMATCH', { param: 'body', args: { param: 'body', dataType: query.dataType, reason: 'a binary body is not JSON' } });
        check(parseJson(data.json!, 'body'));
      }
      const config = pipeline.namedConfig(service, query.configId);
      pipeline.validateConfig(service, config);
      await dispatch(ctx, caller, service, { predict: { data, config: config && { json: namedConfigJson(config) } } });
    },

    /** `predict-with-config`: PredictRequestData, data and config as objects. */
    async predictWithConfig(ctx) {
      const { caller, service } = admit(ctx);
      const body = readWithConfig(await http.readJson(ctx));
      dataTypes.checkFor(body.dataType, ctx.origin)?.(body.data);
      const config = effectiveConfig(service, body.config);
      pipeline.validateConfig(service, config.value);
      const data: PayloadProto = { json: JSON.stringify(body.data) };
      if (body.dataType) data.dataType = body.dataType;
      const configJson = config.json ?? (config.value === undefined ? undefined : JSON.stringify(config.value));
      await dispatch(ctx, caller, service, { predict: { data, config: configJson === undefined ? undefined : { json: configJson } } });
    },

    /** `predict-with-config-v2`: data and config as strings, passed on as sent. */
    async predictWithConfigV2(ctx) {
      const { caller, service } = admit(ctx);
      const body = readV2(await http.readJson(ctx));
      const check = dataTypes.checkFor(body.dataType, ctx.origin);
      if (check) check(parseJson(body.data, 'data'));
      const own = body.config ? parseJson(body.config, 'config') : undefined;
      const config = effectiveConfig(service, own);
      pipeline.validateConfig(service, config.value);
      const data: PayloadProto = { json: body.data };
      if (body.dataType) data.dataType = body.dataType;
      const configJson = own === undefined || own === null ? config.json : body.config!;
      await dispatch(ctx, caller, service, { predict: { data, config: configJson ? { json: configJson } : undefined } });
    },

    /** `ext`: a call of the service's extended method. */
    async ext(ctx) {
      const { caller, service } = admit(ctx);
      const body = readExt(await http.readJson(ctx));
      await dispatch(ctx, caller, service, { ext: { methodName: body.methodName, params: body.params } });
    },
  };
}

function parseJson(text: string, param: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw gatewayError('MALFORMED_JSON', { param, args: { reason: `${param}: ${(err as Error).message}` } });
  }
}

/** Named configs are frozen config objects: each is serialised once. */
const serialised = new WeakMap<object, string>();

function namedConfigJson(config: Readonly<Record<string, unknown>>): string {
  let json = serialised.get(config);
  if (json === undefined) serialised.set(config, (json = JSON.stringify(config)));
  return json;
}
