/**
 * Reading the three creation bodies into what a task stores, with the checks synchronous predict
 * makes: the spec's PredictRequestData / Predict2RequestData schemas (shared with sync-predict), the
 * data check of a `dataType` that names a published type, the service's default config when none is
 * given, and the registry validation of the config. Everything is checked before the task is stored.
 *
 * Stored body per variant: raw, the bytes received; object, the JSON text of `data`; string, `data`.
 */
import type { Context } from 'koa';
import {
  compileRequestSchema, gatewayError,
  type PluginContext, type ServiceEntry, type TaskRequestInput,
} from '../../core/plugins/index.js';
import querySchema from '../../schemas/sync-predict/predict-query.schema.json' with { type: 'json' };
import v2Schema from '../../schemas/sync-predict/predict-with-config-v2.schema.json' with { type: 'json' };
import withConfigSchema from '../../schemas/sync-predict/predict-with-config.schema.json' with { type: 'json' };
import type { AsyncPredictOptions } from './options.js';
import { binaryMediaType } from './transform.js';

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

interface PredictQuery {
  configId?: string;
  dataType?: string;
}

export type TaskReader = (koa: Context, service: ServiceEntry) => Promise<TaskRequestInput>;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Compiles the body checks (at boot) and returns one reader per creation endpoint. */
export function createTaskReaders(ctx: PluginContext<AsyncPredictOptions>): Record<'raw' | 'object' | 'string', TaskReader> {
  const { http, pipeline, dataTypes } = ctx;
  const readQuery = compileRequestSchema<PredictQuery>(querySchema, 'query');
  const readWithConfig = compileRequestSchema<PredictRequestData>(withConfigSchema);
  const readV2 = compileRequestSchema<Predict2RequestData>(v2Schema);

  /** The config the task will send: the request's own, else the service's (named) default; validated. */
  const withConfig = (service: ServiceEntry, request: TaskRequestInput, own: unknown, configId?: string): TaskRequestInput => {
    let config = own;
    if (config === undefined) {
      const named = pipeline.namedConfig(service, configId);
      if (named !== undefined) {
        config = named;
        request.config = JSON.stringify(named);
      }
    }
    pipeline.validateConfig(service, config);
    return request;
  };

  return {
    /** `async/predict`: the body exactly as received; query `configId` and `dataType`. */
    async raw(koa, service) {
      const query = readQuery(koa.query);
      const body = await http.readRawBody(koa);
      if (body.length === 0) throw gatewayError('VALIDATION_FAILED', { param: 'body', args: { reason: 'the body is empty; send the predict data in the service\'s format' } });
      const contentType = binaryMediaType(koa.get('content-type'));
      const check = dataTypes.checkFor(query.dataType, koa.origin);
      if (contentType === undefined) {
        const data = parseJson(utf8Text(body), 'body');
        check?.(data);
      } else if (check) {
        throw gatewayError('DATA_TYPE_MISMATCH', { param: 'body', args: { param: 'body', dataType: query.dataType, reason: 'a binary body is not JSON' } });
      }
      const request: TaskRequestInput = {
        kind: 'raw',
        body,
        ...(query.configId !== undefined ? { configId: Number(query.configId) } : {}),
        ...(query.dataType ? { dataType: query.dataType } : {}),
        ...(contentType !== undefined ? { contentType } : {}),
      };
      return withConfig(service, request, undefined, query.configId);
    },

    /** `async/predict-with-config`: PredictRequestData. */
    async object(koa, service) {
      const body = readWithConfig(await http.readJson(koa));
      dataTypes.checkFor(body.dataType, koa.origin)?.(body.data);
      const own = body.config ?? undefined;
      const request: TaskRequestInput = {
        kind: 'object',
        body: Buffer.from(JSON.stringify(body.data), 'utf8'),
        ...(own !== undefined ? { config: JSON.stringify(own) } : {}),
        ...(body.dataType ? { dataType: body.dataType } : {}),
      };
      return withConfig(service, request, own);
    },

    /** `async/predict-with-config-v2`: Predict2RequestData; data and config are kept as the given strings. */
    async string(koa, service) {
      const body = readV2(await http.readJson(koa));
      const check = dataTypes.checkFor(body.dataType, koa.origin);
      if (check) check(parseJson(body.data, 'data'));
      const own = body.config ? parseJson(body.config, 'config') : undefined;
      const request: TaskRequestInput = {
        kind: 'string',
        body: Buffer.from(body.data, 'utf8'),
        ...(body.config ? { config: body.config } : {}),
        ...(body.dataType ? { dataType: body.dataType } : {}),
      };
      return withConfig(service, request, own);
    },
  };
}

function utf8Text(body: Buffer): string {
  try {
    return utf8.decode(body);
  } catch {
    throw gatewayError('MALFORMED_JSON', { param: 'body', args: { reason: 'the body is not UTF-8 text; send binary data with Content-Type application/octet-stream' } });
  }
}

function parseJson(text: string, param: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw gatewayError('MALFORMED_JSON', { param, args: { reason: `${param}: ${(err as Error).message}` } });
  }
}
