import type { PayloadProto, StringMap } from '../../proto/src/index.js';
import { Payload, isPayloadProto, jsonPayload } from '../payload.js';
import type { ModelResponse } from './handlers.js';

const RESPONSE_KEYS = new Set(['data', 'headers', 'statusCode']);

function isModelResponse(value: unknown): value is ModelResponse {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const record = value as Record<string, unknown>;
  if (!('data' in record)) return false;
  for (const key of Object.keys(record)) if (!RESPONSE_KEYS.has(key)) return false;
  return isPayloadProto(record.data) || record.data instanceof Payload;
}

export function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function'
  );
}

function asPayloadProto(value: PayloadProto | Payload): PayloadProto {
  const proto = value instanceof Payload ? value.proto : value;
  const { dataType, json, protobuf } = proto;
  const out: PayloadProto = {};
  if (dataType !== undefined) out.dataType = dataType;
  if (proto.body === 'protobuf' || (proto.body === undefined && protobuf !== undefined && json === undefined)) out.protobuf = protobuf;
  else if (json !== undefined) out.json = json;
  return out;
}

/** A handler's answer value as a response: payload, headers and status code. */
export function toModelResponse(output: unknown): ModelResponse {
  if (isModelResponse(output)) {
    const response: ModelResponse = { data: asPayloadProto(output.data) };
    if (output.headers) response.headers = { ...output.headers };
    if (output.statusCode !== undefined) response.statusCode = output.statusCode;
    return response;
  }
  if (output instanceof Payload || isPayloadProto(output)) return { data: asPayloadProto(output) };
  return { data: jsonPayload(output === undefined ? null : output) };
}

/** Merge headers; later maps win. Returns undefined when there are none. */
export function mergeHeaders(...maps: (StringMap | undefined)[]): StringMap | undefined {
  const merged: StringMap = {};
  let any = false;
  for (const map of maps) {
    if (!map) continue;
    for (const [key, value] of Object.entries(map)) {
      merged[key] = value;
      any = true;
    }
  }
  return any ? merged : undefined;
}
