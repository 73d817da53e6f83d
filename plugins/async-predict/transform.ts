/**
 * A stored task → the predict request the service gets, and the service's answer → the stored
 * result. Pure functions, no HTTP and no store.
 *
 * Raw body → PayloadProto, as synchronous predict sends it: a body that came with a binary
 * Content-Type (`binaryMediaType`: octet-stream and the protobuf types) goes as `protobuf` bytes; any
 * other is UTF-8 JSON text (checked at creation) and goes as `json`, byte for byte. `dataType` is the
 * query's.
 */
import {
  AnswerCollector,
  binaryMediaType,
  type PayloadProto,
  type ServiceResponse,
  type PredictRequestProto,
  type ServiceAnswer,
  type TaskRequestInfo,
  type TaskResult,
} from '../../core/plugins/index.js';

/** The predict request a stored task is dispatched with. */
export function predictRequestOf(info: TaskRequestInfo, body: Buffer): PredictRequestProto {
  const binary = info.kind === 'raw' && binaryMediaType(info.contentType) !== undefined;
  const data: PayloadProto = binary ? { protobuf: body } : { json: body.toString('utf8') };
  if (info.dataType !== undefined) data.dataType = info.dataType;
  return info.config !== undefined ? { data, config: { json: info.config } } : { data };
}

/**
 * The stored result of a service's answer (gathered by core/gate/answer.ts, the reading sync predict
 * uses too: status, allowed headers, payloads): one payload's JSON text exactly as sent; an answer of
 * several partialPredict frames becomes a JSON array of their payloads (joined as text, not parsed).
 * A protobuf payload takes the proto3 JSON form of PayloadProto (`{"dataType": …, "protobuf":
 * "<base64>"}`): the result endpoint answers JSON.
 */
export function resultOf(answer: ServiceResponse): TaskResult {
  const payloads = answer.json.length ? answer.json : answer.protobuf.map((bytes) => protobufJson(bytes, answer.dataType));
  const body = payloads.length === 1 ? payloads[0]! : payloads.length === 0 ? 'null' : `[${payloads.join(',')}]`;
  return { statusCode: answer.status ?? 200, headers: answer.headers, body: Buffer.from(body, 'utf8') };
}

/** The result of the frames of one answer (a batch item's predict), bounded by `maxBytes`. */
export function resultOfFrames(frames: readonly ServiceAnswer[], serviceName: string, maxBytes: number): TaskResult {
  const collector = new AnswerCollector(serviceName, maxBytes);
  for (const frame of frames) collector.add(frame);
  return resultOf(collector.result());
}

function protobufJson(bytes: Buffer, dataType: string | undefined): string {
  return JSON.stringify({ ...(dataType ? { dataType } : {}), protobuf: bytes.toString('base64') });
}
