import { gatewayError, type GatewayError } from '../errors.js';
import {
  EXT_FIELD,
  EXT_PARAMS_FIELD,
  LENGTH_DELIMITED,
  fieldHeader,
  forEachField,
  readVarint,
  type ClientRequestProto,
} from '../../proto/src/index.js';
import { RAW_EXT_MIN_BYTES, RawExt, isPlainExt } from './raw-ext.js';

/** Bounds of one client-call message (process, processResponseStream, processStream). */
export interface ClientMessageLimits {
  /** Largest message, in bytes (the gRPC server also refuses larger ones before reading them). */
  maxMessageBytes: number;
  /** Most `headers` entries. */
  maxHeaders: number;
  /** Most bytes of `headers` entries together (keys, values and their framing). */
  maxHeaderBytes: number;
  /** Most `ext.params` entries (`limits.extMaxParams`). */
  maxExtParams: number;
  /** Most bytes of `ext.params` entries together (keys, values and their framing; `limits.extMaxParamBytes`). */
  maxExtParamBytes: number;
}

/** The fields of ClientRequestProto the preflight reads (proto/gate.proto). */
const FIELD = { account: 1, model: 2, authToken: 3, ext: EXT_FIELD, headers: 1000 } as const;
/** Longer account, model or authToken values are not decoded: no valid one is that long. */
const MAX_ADDRESS_BYTES = 1024;
/** Fields besides headers a well-formed message can carry: the 4 scalars, the body, some slack. */
const OTHER_FIELDS = 16;

/**
 * A client message as the deserializer hands it over: the few fields admission needs, read by a scan
 * of the wire format that decodes nothing else, and the full decode for later. Decoding a message
 * with a huge `headers` map costs seconds of CPU, so the key, account and model are checked first
 * (pipeline.admit) and the rest is decoded only for an admitted caller (#15 "Broken"). The same scan
 * counts `ext.params`, which an admitted caller could otherwise make the gateway decode and re-encode
 * by the hundred thousand (#25 N1).
 *
 * `decode()` hands the message over once and lets go of its bytes: grpc-js keeps the deserialized
 * message in its call until the call object is collected, and a call that waited (on its account's
 * input rate, for an instance) is old by then, so a full collection was the only one to free the
 * message's bytes (see gathered-chunks.ts).
 */
export class ClientMessage {
  readonly account: string;
  readonly model: string;
  readonly authToken: string | undefined;
  /** Why the message is refused before any decoding (too large, too many headers, malformed). */
  readonly refused: GatewayError | undefined;
  #bytes: Buffer | undefined;
  readonly #decode: (bytes: Buffer) => ClientRequestProto;
  readonly #ext: ExtRange | undefined;

  constructor(fields: Preflight, bytes: Buffer, decode: (bytes: Buffer) => ClientRequestProto) {
    this.account = fields.account ?? '';
    this.model = fields.model ?? '';
    this.authToken = fields.authToken;
    this.refused = fields.refused;
    this.#ext = fields.ext;
    this.#bytes = bytes;
    this.#decode = decode;
  }

  /**
   * The whole message, once; call only after admission. Throws VALIDATION_FAILED when it does not
   * decode, and an Error when called again (the bytes are gone).
   */
  decode(): ClientRequestProto {
    if (this.refused) throw this.refused;
    const bytes = this.#bytes;
    if (!bytes) throw new Error('ClientMessage.decode() called twice');
    this.#bytes = undefined;
    try {
      return this.#withRawExt(bytes) ?? this.#decode(bytes);
    } catch (err) {
      throw gatewayError('VALIDATION_FAILED', { args: { reason: `the message is not a ClientRequestProto: ${(err as Error).message}` } });
    }
  }

  /**
   * A large, plain ext call decoded without its params: the rest of the message is decoded, the ext
   * travels to the service as the caller's bytes (raw-ext.ts). Undefined when the message does not
   * qualify (small, several ext fields, another body member, anything unusual in the ext).
   */
  #withRawExt(bytes: Buffer): ClientRequestProto | undefined {
    const ext = this.#ext;
    if (!ext || ext.end - ext.start < RAW_EXT_MIN_BYTES || !isPlainExt(bytes, ext.start, ext.end)) return undefined;
    const request = this.#decode(Buffer.concat([bytes.subarray(0, ext.fieldStart), bytes.subarray(ext.end)]));
    if (request.body !== undefined) return undefined;
    const decodeExt = (raw: Buffer) => this.#decode(Buffer.concat([fieldHeader(EXT_FIELD, raw.length), raw])).ext ?? {};
    return { ...request, body: 'ext', ext: new RawExt(bytes.subarray(ext.start, ext.end), decodeExt) };
  }
}

/** Where the one `ext` field of a message lies: its tag, and its value's bytes. */
interface ExtRange {
  fieldStart: number;
  start: number;
  end: number;
}

/** What the preflight reads of a message. */
interface Preflight {
  account?: string;
  model?: string;
  authToken?: string;
  refused?: GatewayError;
  /** The ext field, when the message has exactly one. */
  ext?: ExtRange;
}

/**
 * A gRPC request deserializer for the client calls: it never throws (a throwing deserializer becomes
 * an uncoded INTERNAL status); what is wrong travels in `ClientMessage.refused` and is answered in-band.
 */
export function clientMessageDeserializer(
  limits: ClientMessageLimits,
  decode: (bytes: Buffer) => ClientRequestProto,
): (bytes: Buffer) => ClientMessage {
  return (bytes) => new ClientMessage(preflight(bytes, limits), bytes, decode);
}

/** Reads account, model and authToken and measures `headers`, without decoding the message. */
export function preflight(bytes: Buffer, limits: ClientMessageLimits): Preflight {
  if (bytes.length > limits.maxMessageBytes) {
    return { refused: gatewayError('MESSAGE_TOO_LARGE', { args: { size: bytes.length, limit: limits.maxMessageBytes } }) };
  }
  const out: Preflight = {};
  let extFields = 0;
  const malformed = (reason: string) => ({
    refused: gatewayError('VALIDATION_FAILED', { args: { reason: `the message is not a ClientRequestProto: ${reason}` } }),
  });
  const maxFields = limits.maxHeaders + OTHER_FIELDS;
  let headerCount = 0;
  let headerBytes = 0;
  let fields = 0;
  let pos = 0;
  while (pos < bytes.length) {
    const fieldStart = pos;
    const tag = readVarint(bytes, pos);
    if (!tag) return malformed('a truncated field tag');
    pos = tag.next;
    if (++fields > maxFields) return tooManyHeaders(limits, fields);
    const field = Math.floor(tag.value / 8);
    switch (tag.value % 8) {
      case 0: {
        const skipped = readVarint(bytes, pos);
        if (!skipped) return malformed('a truncated varint');
        pos = skipped.next;
        break;
      }
      case 1:
        pos += 8;
        break;
      case 5:
        pos += 4;
        break;
      case 2: {
        const length = readVarint(bytes, pos);
        if (!length || length.next + length.value > bytes.length) return malformed('a field runs past the end of the message');
        const start = length.next;
        pos = start + length.value;
        if (field === FIELD.headers) {
          headerCount++;
          headerBytes += pos - fieldStart;
          if (headerCount > limits.maxHeaders || headerBytes > limits.maxHeaderBytes)
            return tooManyHeaders(limits, headerCount, headerBytes);
        } else if (field === FIELD.ext) {
          const refused = checkExtParams(bytes, start, pos, limits);
          if (refused) return { refused };
          out.ext = ++extFields === 1 ? { fieldStart, start, end: pos } : undefined;
        } else if (field === FIELD.account || field === FIELD.model || field === FIELD.authToken) {
          // An over-long value is kept as a marker that cannot match (admission refuses it) without decoding it.
          const text = length.value > MAX_ADDRESS_BYTES ? '\u0000too-long' : bytes.toString('utf8', start, pos);
          if (field === FIELD.account) out.account = text;
          else if (field === FIELD.model) out.model = text;
          else out.authToken = text;
        }
        break;
      }
      default:
        return malformed(`wire type ${tag.value % 8}`);
    }
  }
  if (pos > bytes.length) return malformed('a field runs past the end of the message');
  return out;
}

/**
 * Counts the `params` entries of the ExtendedRequestProto in `bytes[start, end)` and their bytes, each
 * entry skipped by its length (nothing decoded); the refusal when either is over its limit. A
 * malformed ext is left for the decode to name.
 */
function checkExtParams(bytes: Buffer, start: number, end: number, limits: ClientMessageLimits): GatewayError | undefined {
  let count = 0;
  let paramBytes = 0;
  let refused: GatewayError | undefined;
  forEachField(bytes, start, end, (field, wireType, entryStart, _valueStart, entryEnd) => {
    if (wireType !== LENGTH_DELIMITED) return false;
    if (field !== EXT_PARAMS_FIELD) return true;
    count++;
    paramBytes += entryEnd - entryStart;
    refused = extParamsOverLimits(limits, count, paramBytes);
    return !refused;
  });
  return refused;
}

/** The refusal of `count` ext params of `bytes` (entries with their framing) when either is over its limit. */
export function extParamsOverLimits(
  limits: { maxExtParams: number; maxExtParamBytes: number },
  count: number,
  bytes: number,
): GatewayError | undefined {
  if (count > limits.maxExtParams) return extParamsTooLarge(limits, `more than ${limits.maxExtParams} entries`);
  if (bytes > limits.maxExtParamBytes) return extParamsTooLarge(limits, `more than ${limits.maxExtParamBytes} bytes`);
  return undefined;
}

/** 413 EXT_PARAMS_TOO_LARGE naming both limits and what was over. */
export function extParamsTooLarge(limits: { maxExtParams: number; maxExtParamBytes: number }, reason: string): GatewayError {
  return gatewayError('EXT_PARAMS_TOO_LARGE', {
    param: 'params',
    args: { maxParams: limits.maxExtParams, maxParamBytes: limits.maxExtParamBytes, reason },
  });
}

function tooManyHeaders(limits: ClientMessageLimits, count: number, bytes?: number) {
  return {
    refused: gatewayError('HEADERS_TOO_LARGE', {
      param: 'headers',
      args: { maxHeaders: limits.maxHeaders, maxHeaderBytes: limits.maxHeaderBytes, count, ...(bytes === undefined ? {} : { bytes }) },
    }),
  };
}

/**
 * The `authToken` of a client message from its first bytes (`head`, the message without its gRPC
 * prefix), for large messages that should not be received whole before their key is checked. Every
 * protobuf encoder writes ClientRequestProto's fields in order (account 1, model 2, authToken 3,
 * timeoutSec 4 come before headers and the body, by number and by declaration), so the token is
 * known by the first field after them. `decided` is false while the head ends before that point;
 * `token` is undefined when the message has none there.
 */
export function authTokenOfHead(head: Buffer): { decided: boolean; token?: string } {
  let pos = 0;
  let token: string | undefined;
  while (pos < head.length) {
    const tag = readVarint(head, pos);
    if (!tag) return { decided: false };
    const field = Math.floor(tag.value / 8);
    if (field > 4) return { decided: true, token };
    if (tag.value % 8 === 0) {
      const skipped = readVarint(head, tag.next);
      if (!skipped) return { decided: false };
      pos = skipped.next;
    } else if (tag.value % 8 === 2) {
      const length = readVarint(head, tag.next);
      if (!length || length.next + length.value > head.length) return { decided: false };
      pos = length.next + length.value;
      if (field === FIELD.authToken) token = length.value > MAX_ADDRESS_BYTES ? '\u0000too-long' : head.toString('utf8', length.next, pos);
    } else {
      return { decided: true, token }; // malformed: the full preflight names it, if the message gets that far
    }
  }
  return { decided: false };
}

/** A key the early check found good: whose bytes the rest of the message is. */
export interface AdmittedKey {
  readonly accountId: number;
}

/**
 * The key check of a large first client message from its first bytes: answers the key's refusal,
 * the key's account when it is good (the rest of the message is read at that account's input rate),
 * `null` for a message small enough for the normal path (received whole, then admission, then an
 * in-band answer), or undefined while the head is still arriving. `push` takes the call's stream
 * chunks from the first (the 5-byte gRPC prefix included).
 */
export class EarlyKeyCheck {
  #head: Buffer = Buffer.alloc(0);
  #done = false;
  /** The message's size on the wire (its 5-byte prefix included), once the prefix is read. */
  messageBytes: number | undefined;

  constructor(
    private readonly check: (token: string | undefined) => GatewayError | AdmittedKey,
    /** Messages up to this size take the normal path; larger ones are decided within this many bytes. */
    private readonly headBytes: number,
  ) {}

  push(chunk: Buffer): GatewayError | AdmittedKey | null | undefined {
    if (this.#done) return undefined;
    this.#head = Buffer.concat([this.#head, chunk.subarray(0, 5 + this.headBytes - this.#head.length)]);
    if (this.#head.length < 5) return undefined;
    this.messageBytes = 5 + this.#head.readUInt32BE(1);
    if (this.#head.readUInt32BE(1) <= this.headBytes) return this.#finish(null);
    const { decided, token } = authTokenOfHead(this.#head.subarray(5));
    if (!decided && this.#head.length < 5 + this.headBytes) return undefined;
    return this.#finish(this.check(decided ? token : undefined));
  }

  #finish<T extends GatewayError | AdmittedKey | null>(result: T): T {
    this.#done = true;
    this.#head = Buffer.alloc(0);
    return result;
  }
}
