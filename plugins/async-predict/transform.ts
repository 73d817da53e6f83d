/**
 * A stored task → the predict request the service gets, and the service's answer → the stored
 * result. Pure functions, no HTTP and no store.
 *
 * Raw body → PayloadProto, as synchronous predict sends it: a body that came with a binary
 * Content-Type (`binaryMediaType`: octet-stream and the protobuf types) goes as `protobuf` bytes; any
 * other is UTF-8 JSON text (checked at creation) and goes as `json`, byte for byte. `dataType` is the
 * query's.
 */
import { binaryMediaType, type PayloadProto, type PredictRequestProto, type ServiceAnswer, type TaskRequestInfo, type TaskResult } from '../../core/plugins/index.js';

/** The predict request a stored task is dispatched with. */
export function predictRequestOf(info: TaskRequestInfo, body: Buffer): PredictRequestProto {
  const binary = info.kind === 'raw' && binaryMediaType(info.contentType) !== undefined;
  const data: PayloadProto = binary ? { protobuf: body } : { json: body.toString('utf8') };
  if (info.dataType !== undefined) data.dataType = info.dataType;
  return info.config !== undefined ? { data, config: { json: info.config } } : { data };
}

/**
 * The stored result of a service's answer, as synchronous predict would answer it: one payload's JSON
 * text exactly as sent; an answer streamed as several partialPredict frames becomes a JSON array of
 * their payloads (joined as text, not parsed). A protobuf payload takes the proto3 JSON form of
 * PayloadProto (`{"dataType": …, "protobuf": "<base64>"}`): the result endpoint answers JSON.
 * Headers and status code may ride on any frame.
 */
export function resultOf(answers: readonly ServiceAnswer[]): TaskResult {
  const payloads: string[] = [];
  const headers: Record<string, string> = {};
  let statusCode: number | undefined;
  for (const answer of answers) {
    const member = answer.body === 'predict' ? answer.predict : answer.partialPredict;
    if (!member) continue;
    Object.assign(headers, answer.headers ?? {}, member.headers ?? {});
    statusCode ??= member.statusCode;
    const payload = payloadJson(member.data);
    if (payload !== undefined) payloads.push(payload);
  }
  const body = payloads.length === 1 ? payloads[0]! : payloads.length === 0 ? 'null' : `[${payloads.join(',')}]`;
  return { statusCode: statusCode ?? 200, headers, body: Buffer.from(body, 'utf8') };
}

function payloadJson(payload: PayloadProto | undefined): string | undefined {
  if (payload?.json && payload.body !== 'protobuf') return payload.json;
  if (payload?.protobuf?.length) {
    return JSON.stringify({ ...(payload.dataType ? { dataType: payload.dataType } : {}), protobuf: Buffer.from(payload.protobuf).toString('base64') });
  }
  return undefined;
}
