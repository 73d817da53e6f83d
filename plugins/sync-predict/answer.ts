import type { Context } from 'koa';
import { gatewayError, type PayloadProto, type ServiceCall, type StringMap } from '../../core/plugins/index.js';

/** A service's answer, gathered from its frames, ready to write as an HTTP response. */
export interface HttpAnswer {
  status: number | undefined;
  headers: StringMap;
  body: { json: string } | { protobuf: Buffer } | undefined;
}

interface AnswerMember {
  data?: PayloadProto;
  headers?: StringMap;
  statusCode?: number;
}

/**
 * Reads a call to its end. A plain answer (predict, ext) is one frame; a service may also answer a
 * predict with a stream of partialPredict frames, whose payloads are joined: JSON payloads as a JSON
 * array (by concatenating their text, not by parsing), protobuf payloads byte after byte. Status and
 * headers may ride on any frame (Java SDKs put them on an empty start frame).
 */
export async function collectAnswer(call: ServiceCall, serviceName: string): Promise<HttpAnswer> {
  let status: number | undefined;
  let headers: StringMap = {};
  const json: string[] = [];
  const protobuf: Buffer[] = [];
  for await (const frame of call) {
    const member: AnswerMember | undefined =
      frame.body === 'predict' ? frame.predict : frame.body === 'ext' ? frame.ext : frame.body === 'partialPredict' ? frame.partialPredict : undefined;
    if (!member) continue;
    if (frame.headers) headers = { ...headers, ...frame.headers };
    if (member.headers) headers = { ...headers, ...member.headers };
    if (status === undefined && member.statusCode !== undefined && member.statusCode >= 100 && member.statusCode <= 599) status = member.statusCode;
    const data = member.data;
    if (data?.json) json.push(data.json);
    else if (data?.protobuf?.length) protobuf.push(data.protobuf);
  }
  if (json.length && protobuf.length) {
    throw gatewayError('SERVICE_BAD_RESPONSE', { args: { service: serviceName, reason: 'a streamed answer mixed JSON and protobuf payloads' } });
  }
  const body = json.length === 1 ? { json: json[0]! }
    : json.length > 1 ? { json: `[${json.join(',')}]` }
    : protobuf.length ? { protobuf: protobuf.length === 1 ? protobuf[0]! : Buffer.concat(protobuf) }
    : undefined;
  return { status, headers, body };
}

/** Headers a service must not set on the caller's response: framing, hop-by-hop, the gateway's own. */
const NOT_PASSED = new Set([
  'connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade',
  'content-length', 'content-encoding', 'host', 'x-request-id', 'x-should-retry',
]);
/** Billing instructions from the service to the platform (reference/service-protocol.md section 3). */
const BILLING = /^z-(custom-|deferred-billing|recurring-billing|billing-)/i;
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/**
 * Writes the service's answer as it came: its JSON text with `application/json` (not parsed and
 * re-serialised), protobuf bytes as `application/octet-stream`, its status code and its headers
 * (a Content-Type of its own wins).
 */
export function writeAnswer(ctx: Context, answer: HttpAnswer): void {
  for (const [name, value] of Object.entries(answer.headers)) {
    if (TOKEN.test(name) && FIELD_VALUE.test(value) && !NOT_PASSED.has(name.toLowerCase()) && !BILLING.test(name)) ctx.set(name, value);
  }
  ctx.status = answer.status ?? 200;
  const ownType = Boolean(ctx.response.get('Content-Type'));
  if (!answer.body) {
    ctx.body = '';
    if (!ownType) ctx.remove('Content-Type');
  } else if ('json' in answer.body) {
    if (!ownType) ctx.type = 'application/json';
    ctx.body = answer.body.json;
  } else {
    if (!ownType) ctx.type = 'application/octet-stream';
    ctx.body = answer.body.protobuf;
  }
}
