import { gatewayError, toGatewayError, type GatewayError } from '../errors.js';
import type { PayloadProto, ServiceToGateProto, StringMap } from '../../proto/src/index.js';

/** An answer frame of one request: a ServiceToGateProto whose body is not `error`. */
export type ServiceAnswer = ServiceToGateProto;

/** Whether an answer ends its request: predict, ext, batch, fit, or partialPredict with finish. */
export function isTerminal(answer: ServiceToGateProto): boolean {
  switch (answer.body) {
    case 'predict':
    case 'ext':
    case 'batch':
    case 'fit':
    case 'status':
    case 'error':
      return true;
    case 'partialPredict':
      return answer.partialPredict?.finish === true;
    default:
      return false;
  }
}

/** The payload bytes an answer frame carries: what a reader that does not read makes the gateway hold. */
export function answerBytes(answer: ServiceToGateProto): number {
  const member = answer.predict ?? answer.partialPredict ?? answer.ext;
  let bytes = payloadBytes(member?.data);
  for (const item of answer.batch?.data ?? []) bytes += payloadBytes(item.predict?.data);
  return bytes;
}

function payloadBytes(data: { json?: string; protobuf?: Uint8Array } | undefined): number {
  return (data?.json?.length ?? 0) + (data?.protobuf?.length ?? 0);
}

/**
 * What the answer reader needs of a call (a ServiceCall is one): its frames, its answer bound, and a
 * way to stop it. Named here, not imported, so that the call (which reads its own final answer
 * through this file) and this file do not import each other.
 */
export interface AnswerSource extends AsyncIterable<ServiceAnswer> {
  readonly maxAnswerBytes: number;
  cancel(error: GatewayError): void;
}

/**
 * A service's answer gathered from its frames into one response: the one reading of answer frames,
 * used by sync predict, async results and the chat adapters (reference: docs/limits.md).
 *
 * - `predict`, `ext` and `partialPredict` frames carry the answer; other frames are not part of it.
 * - Status: the first frame that sets `statusCode` decides. Only final statuses (200-599) are taken;
 *   0 or absent means "not set" (200). Any other value (1xx, 600+) is SERVICE_BAD_RESPONSE (502):
 *   an interim status would leave the caller without an answer.
 * - Headers: frame headers and member headers, later frames overriding, filtered by the allow-list
 *   below; a service cannot set cookies, CORS, redirects or the gateway's own headers.
 * - Payloads: JSON texts in order, or protobuf bytes in order; an answer that mixes both is
 *   SERVICE_BAD_RESPONSE.
 * - Size: more than `maxBytes` of payload is SERVICE_ANSWER_TOO_LARGE (502), and the call is cancelled.
 */
export interface ServiceResponse {
  status: number | undefined;
  headers: StringMap;
  /** JSON texts of the payloads, in order (empty when the answer is protobuf or has no data). */
  json: string[];
  /** Protobuf payloads, in order. */
  protobuf: Buffer[];
  /** Whether the answer came as partialPredict frames (a stream) rather than one predict/ext frame. */
  streamed: boolean;
  /** The `dataType` of the first payload that named one. */
  dataType: string | undefined;
}

/** The member of a frame that carries an answer, if it carries one. */
function memberOf(frame: ServiceAnswer): { data?: PayloadProto; headers?: StringMap; statusCode?: number } | undefined {
  switch (frame.body) {
    case 'predict':
      return frame.predict;
    case 'ext':
      return frame.ext;
    case 'partialPredict':
      return frame.partialPredict;
    default:
      return undefined;
  }
}

/** Folds answer frames into a ServiceResponse; `add` throws the coded errors described above. */
export class AnswerCollector {
  readonly #service: string;
  readonly #maxBytes: number;
  readonly #response: ServiceResponse = { status: undefined, headers: {}, json: [], protobuf: [], streamed: false, dataType: undefined };
  #bytes = 0;

  constructor(serviceName: string, maxBytes: number) {
    this.#service = serviceName;
    this.#maxBytes = maxBytes;
  }

  add(frame: ServiceAnswer): void {
    const member = memberOf(frame);
    if (!member) return;
    const response = this.#response;
    if (frame.body === 'partialPredict') response.streamed = true;
    if (frame.headers) Object.assign(response.headers, allowedHeaders(frame.headers));
    if (member.headers) Object.assign(response.headers, allowedHeaders(member.headers));
    if (response.status === undefined && member.statusCode) {
      if (!Number.isInteger(member.statusCode) || member.statusCode < 200 || member.statusCode > 599) {
        throw this.#bad(`statusCode ${member.statusCode} is not a final HTTP status (200-599)`);
      }
      response.status = member.statusCode;
    }
    const data = member.data;
    if (!data) return;
    response.dataType ??= data.dataType || undefined;
    if (data.json) {
      this.#count(data.json.length);
      response.json.push(data.json);
    } else if (data.protobuf?.length) {
      this.#count(data.protobuf.length);
      response.protobuf.push(Buffer.from(data.protobuf.buffer, data.protobuf.byteOffset, data.protobuf.byteLength));
    }
    if (response.json.length && response.protobuf.length) throw this.#bad('the answer mixed JSON and protobuf payloads');
  }

  result(): ServiceResponse {
    return this.#response;
  }

  #count(bytes: number): void {
    this.#bytes += bytes;
    if (this.#bytes > this.#maxBytes)
      throw gatewayError('SERVICE_ANSWER_TOO_LARGE', { args: { service: this.#service, limit: this.#maxBytes } });
  }

  #bad(reason: string) {
    return gatewayError('SERVICE_BAD_RESPONSE', { args: { service: this.#service, reason } });
  }
}

/** Reads a call to its end into one ServiceResponse; a refused answer cancels the call at the service. */
export async function collectAnswer(call: AnswerSource, serviceName: string, maxBytes = call.maxAnswerBytes): Promise<ServiceResponse> {
  const collector = new AnswerCollector(serviceName, maxBytes);
  await readThrough(call, collector);
  return collector.result();
}

/**
 * The terminal frame of a call, for callers that answer with one message (gRPC `process`): every
 * frame goes through the same AnswerCollector as an HTTP answer, so statuses, JSON/protobuf mixing
 * and the size bound are decided by one rule; the frame's `headers` become the allowed headers of
 * the whole answer. A streamed answer yields its last frame. A refused answer cancels the call.
 */
export async function finalAnswer(call: AnswerSource, serviceName: string, maxBytes = call.maxAnswerBytes): Promise<ServiceAnswer> {
  const collector = new AnswerCollector(serviceName, maxBytes);
  const last = await readThrough(call, collector);
  if (!last) throw gatewayError('SERVICE_BAD_RESPONSE', { args: { service: serviceName, reason: 'the call ended without an answer' } });
  return { ...last, headers: collector.result().headers };
}

/** Feeds every frame of a call to `collector` and returns the last one; a refusal cancels the call. */
async function readThrough(call: AnswerSource, collector: AnswerCollector): Promise<ServiceAnswer | undefined> {
  let last: ServiceAnswer | undefined;
  for await (const frame of call) {
    try {
      collector.add(frame);
    } catch (err) {
      const error = toGatewayError(err);
      call.cancel(error);
      throw error;
    }
    last = frame;
  }
  return last;
}

/** One body from the payloads: one JSON text as is, several as a JSON array (joined, not parsed); protobuf bytes joined. */
export function answerBody(response: ServiceResponse): { json: string } | { protobuf: Buffer } | undefined {
  const { json, protobuf } = response;
  if (json.length === 1) return { json: json[0]! };
  if (json.length > 1) return { json: `[${json.join(',')}]` };
  if (protobuf.length) return { protobuf: protobuf.length === 1 ? protobuf[0]! : Buffer.concat(protobuf) };
  return undefined;
}

/**
 * Response headers a service may set. Everything else is dropped: Set-Cookie, Access-Control-*,
 * Location and Refresh (redirects on the gateway's origin), WWW-Authenticate, Strict-Transport-Security,
 * Content-Security-Policy, hop-by-hop and framing headers.
 */
const ALLOWED = new Set([
  'content-type',
  'content-language',
  'content-disposition',
  'cache-control',
  'etag',
  'last-modified',
  'expires',
  'retry-after',
  'vary',
]);
/** The service's own `X-` and `Z-` headers pass, except these, which the gateway sets or which mean something to proxies and clients. */
const PREFIX_DENIED = new Set([
  'x-request-id',
  'x-should-retry',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
  'x-real-ip',
  'x-accel-redirect',
  'x-accel-buffering',
]);
/** Billing instructions from the service to the platform (reference/service-protocol.md section 3). */
const BILLING = /^z-(custom-|deferred-billing|recurring-billing|billing-)/i;
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

export function isAllowedServiceHeader(name: string, value: string): boolean {
  if (!TOKEN.test(name) || !FIELD_VALUE.test(value)) return false;
  const lower = name.toLowerCase();
  if (ALLOWED.has(lower)) return true;
  if (!lower.startsWith('x-') && !lower.startsWith('z-')) return false;
  return !PREFIX_DENIED.has(lower) && !BILLING.test(lower);
}

function allowedHeaders(headers: StringMap): StringMap {
  const out: StringMap = {};
  for (const [name, value] of Object.entries(headers)) if (isAllowedServiceHeader(name, value)) out[name] = value;
  return out;
}
