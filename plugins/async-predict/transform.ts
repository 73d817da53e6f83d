/**
 * The three creation bodies → what a task stores, and a stored task → the predict request the service
 * gets, and the service's answer → the stored result. Pure functions, no HTTP and no store.
 *
 * Raw body → PayloadProto: a body sent with a binary Content-Type (`application/octet-stream`,
 * `application/x-protobuf`, `application/protobuf`, `application/vnd.google.protobuf`) goes to the
 * service as `protobuf` bytes; any other body must be UTF-8 JSON text and goes as `json`, byte for
 * byte. `dataType` is the query's. The stored body is always the exact bytes received.
 */
import { gatewayError, type PayloadProto, type PredictRequestProto, type ServiceAnswer, type TaskRequestInfo, type TaskRequestInput, type TaskResult } from '../../core/plugins/index.js';

const BINARY_TYPES = new Set(['application/octet-stream', 'application/x-protobuf', 'application/protobuf', 'application/vnd.google.protobuf']);

export function isBinaryContentType(contentType: string | undefined): boolean {
  const media = contentType?.split(';')[0]?.trim().toLowerCase();
  return media !== undefined && BINARY_TYPES.has(media);
}

/** A creation request before the service's default config is applied. */
export interface NewTask {
  request: TaskRequestInput;
  /** The config as given (parsed), for validation; undefined when the caller gave none. */
  config?: unknown;
  /** The raw variant's `configId` as given. */
  configId?: string;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** `async/predict`: the body as received; `configId` and `dataType` from the query. */
export function rawTask(body: Buffer, query: Record<string, string | string[] | undefined>, contentType: string | undefined): NewTask {
  const configId = single(query.configId, 'configId');
  if (configId !== undefined && !/^-?\d{1,15}$/.test(configId)) {
    throw gatewayError('VALIDATION_FAILED', { param: 'configId', args: { reason: 'configId must be an integer' } });
  }
  const dataType = single(query.dataType, 'dataType') || undefined;
  if (body.length === 0) throw gatewayError('VALIDATION_FAILED', { param: 'body', args: { reason: 'the request body (the predict data) is empty' } });
  const binary = isBinaryContentType(contentType);
  if (!binary) checkJsonText(body);
  return {
    request: {
      kind: 'raw',
      body,
      ...(configId !== undefined ? { configId: Number(configId) } : {}),
      ...(dataType !== undefined ? { dataType } : {}),
      ...(binary ? { contentType: contentType!.split(';')[0]!.trim().toLowerCase() } : {}),
    },
    ...(configId !== undefined ? { configId } : {}),
  };
}

/** `async/predict-with-config`: PredictRequestData; the stored body is the JSON text of `data`. */
export function objectTask(json: unknown): NewTask {
  const body = requestObject(json);
  if (body.data === undefined || body.data === null) throw missing('data');
  const config = body.config ?? undefined;
  if (config !== undefined && (typeof config !== 'object' || Array.isArray(config))) throw wrongType('config', 'an object');
  const dataType = optionalString(body, 'dataType');
  return {
    request: {
      kind: 'object',
      body: Buffer.from(JSON.stringify(body.data), 'utf8'),
      ...(config !== undefined ? { config: JSON.stringify(config) } : {}),
      ...(dataType !== undefined ? { dataType } : {}),
    },
    ...(config !== undefined ? { config } : {}),
  };
}

/** `async/predict-with-config-v2`: Predict2RequestData; `data` and `config` are kept as the given strings. */
export function stringTask(json: unknown): NewTask {
  const body = requestObject(json);
  if (body.data === undefined || body.data === null) throw missing('data');
  if (typeof body.data !== 'string') throw wrongType('data', 'a string');
  const configText = optionalString(body, 'config');
  const dataType = optionalString(body, 'dataType');
  let config: unknown;
  if (configText !== undefined) {
    try {
      config = JSON.parse(configText);
    } catch (err) {
      throw gatewayError('MALFORMED_JSON', { param: 'config', args: { reason: `config: ${(err as Error).message}` } });
    }
  }
  return {
    request: {
      kind: 'string',
      body: Buffer.from(body.data, 'utf8'),
      ...(configText !== undefined ? { config: configText } : {}),
      ...(dataType !== undefined ? { dataType } : {}),
    },
    ...(configText !== undefined ? { config } : {}),
  };
}

/** The predict request a stored task is dispatched with. */
export function predictRequestOf(info: TaskRequestInfo, body: Buffer): PredictRequestProto {
  const data: PayloadProto = info.kind === 'raw' && isBinaryContentType(info.contentType) ? { protobuf: body } : { json: body.toString('utf8') };
  if (info.dataType !== undefined) data.dataType = info.dataType;
  return info.config !== undefined ? { data, config: { json: info.config } } : { data };
}

/**
 * The stored result of a service's answer: a `predict` answer's data as JSON text, exactly as sent;
 * an answer streamed as `partialPredict` frames becomes a JSON array of the frames' data. Protobuf
 * payloads take the proto3 JSON form of PayloadProto (`{"dataType": …, "protobuf": "<base64>"}`),
 * since the result endpoint always answers application/json.
 */
export function resultOf(answers: readonly ServiceAnswer[]): TaskResult {
  const last = answers.at(-1);
  if (last?.body === 'predict' && answers.length === 1) {
    const predict = last.predict ?? {};
    return { statusCode: predict.statusCode ?? 200, headers: { ...(predict.headers ?? {}) }, body: Buffer.from(payloadJson(predict.data), 'utf8') };
  }
  const frames = answers.filter((a) => a.body === 'partialPredict' && a.partialPredict?.data);
  const headers: Record<string, string> = {};
  let statusCode: number | undefined;
  for (const answer of answers) {
    Object.assign(headers, answer.partialPredict?.headers ?? {});
    statusCode ??= answer.partialPredict?.statusCode;
  }
  const body = `[${frames.map((f) => payloadJson(f.partialPredict!.data)).join(',')}]`;
  return { statusCode: statusCode ?? 200, headers, body: Buffer.from(body, 'utf8') };
}

function payloadJson(payload: PayloadProto | undefined): string {
  if (payload?.json !== undefined && payload.body !== 'protobuf') return payload.json;
  if (payload?.protobuf !== undefined) {
    return JSON.stringify({ ...(payload.dataType ? { dataType: payload.dataType } : {}), protobuf: Buffer.from(payload.protobuf).toString('base64') });
  }
  return 'null';
}

function checkJsonText(body: Buffer): void {
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    throw gatewayError('MALFORMED_JSON', { param: 'body', args: { reason: 'the body is not UTF-8 text; send binary data with Content-Type application/octet-stream' } });
  }
  try {
    JSON.parse(text);
  } catch (err) {
    throw gatewayError('MALFORMED_JSON', { param: 'body', args: { reason: (err as Error).message } });
  }
}

function requestObject(json: unknown): Record<string, unknown> {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw gatewayError('VALIDATION_FAILED', { param: 'body', args: { reason: 'the body must be a JSON object' } });
  }
  return json as Record<string, unknown>;
}

function optionalString(body: Record<string, unknown>, field: string): string | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw wrongType(field, 'a string');
  return value;
}

function single(value: string | string[] | undefined, name: string): string | undefined {
  if (Array.isArray(value)) throw gatewayError('VALIDATION_FAILED', { param: name, args: { reason: `${name} is given more than once` } });
  return value;
}

const missing = (field: string) => gatewayError('VALIDATION_FAILED', { param: field, args: { reason: `${field} is required` } });
const wrongType = (field: string, expected: string) => gatewayError('VALIDATION_FAILED', { param: field, args: { reason: `${field} must be ${expected}` } });
