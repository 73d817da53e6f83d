/**
 * Reading the three creation bodies into what a task stores, with the checks synchronous predict
 * makes (core's predict-body readers): the spec's body schemas, the data check of a `dataType` that
 * names a published type, and the predict config (the caller's, else the service's named default)
 * validated against the registry. Everything is checked before the task is stored.
 *
 * Stored body per variant: raw, the bytes received; object, the JSON text of `data`; string, `data`.
 */
import type { Context } from 'koa';
import {
  binaryMediaType,
  gatewayError,
  readPredict2RequestData,
  readPredictQuery,
  readPredictRequestData,
  utf8Text,
  type PluginContext,
  type ServiceEntry,
  type TaskRequestInput,
} from '../../core/plugins/index.js';
import type { AsyncPredictOptions } from './options.js';

export type TaskReader = (koa: Context, service: ServiceEntry) => Promise<TaskRequestInput>;

/** One reader per creation endpoint. */
export function createTaskReaders(ctx: PluginContext<AsyncPredictOptions>): Record<'raw' | 'object' | 'string', TaskReader> {
  const { http, pipeline, dataTypes } = ctx;
  const withConfig = (request: TaskRequestInput, json: string | undefined): TaskRequestInput =>
    json === undefined ? request : { ...request, config: json };

  return {
    /** `async/predict`: the body exactly as received; query `configId` and `dataType`. */
    async raw(koa, service) {
      const query = readPredictQuery(koa.query);
      const body = await http.readRawBody(koa);
      if (body.length === 0)
        throw gatewayError('VALIDATION_FAILED', {
          param: 'body',
          args: { reason: "the body is empty; send the predict data in the service's format" },
        });
      const contentType = binaryMediaType(koa.get('content-type'));
      const check = dataTypes.checkFor(query.dataType, koa.origin);
      if (contentType === undefined) {
        const data = http.parseJson(jsonText(body), 'body'); // the service gets it as JSON text: it must be JSON
        check?.(data);
      } else if (check) {
        throw gatewayError('DATA_TYPE_MISMATCH', {
          param: 'body',
          args: { param: 'body', dataType: query.dataType, reason: 'a binary body is not JSON' },
        });
      }
      const config = pipeline.predictConfig(service, undefined, { configId: query.configId });
      return withConfig(
        {
          kind: 'raw',
          body,
          ...(query.configId !== undefined ? { configId: Number(query.configId) } : {}),
          ...(query.dataType ? { dataType: query.dataType } : {}),
          ...(contentType !== undefined ? { contentType } : {}),
        },
        config.json,
      );
    },

    /** `async/predict-with-config`: PredictRequestData. */
    async object(koa, service) {
      const body = readPredictRequestData(await http.readJson(koa));
      dataTypes.checkFor(body.dataType, koa.origin)?.(body.data);
      const config = pipeline.predictConfig(service, body.config);
      return withConfig(
        {
          kind: 'object',
          body: Buffer.from(JSON.stringify(body.data), 'utf8'),
          ...(body.dataType ? { dataType: body.dataType } : {}),
        },
        config.json,
      );
    },

    /** `async/predict-with-config-v2`: Predict2RequestData; data and config are kept as the given strings. */
    async string(koa, service) {
      const body = readPredict2RequestData(await http.readJson(koa));
      const check = dataTypes.checkFor(body.dataType, koa.origin);
      if (check) check(http.parseJson(body.data, 'data'));
      const own = body.config ? http.parseJson(body.config, 'config') : undefined;
      const config = pipeline.predictConfig(service, own, { text: body.config ?? undefined });
      return withConfig(
        {
          kind: 'string',
          body: Buffer.from(body.data, 'utf8'),
          ...(body.dataType ? { dataType: body.dataType } : {}),
        },
        config.json,
      );
    },
  };
}

/** A raw body that goes to the service as JSON text: UTF-8 without a byte order mark (JSON has none). */
function jsonText(body: Buffer): string {
  const text = utf8Text(body);
  if (text === undefined)
    throw gatewayError('MALFORMED_JSON', {
      param: 'body',
      args: { reason: 'the body is not UTF-8 text; send binary data with Content-Type application/octet-stream' },
    });
  if (text.charCodeAt(0) === 0xfeff)
    throw gatewayError('MALFORMED_JSON', {
      param: 'body',
      args: { reason: 'the body starts with a UTF-8 byte order mark; send JSON without one' },
    });
  return text;
}
