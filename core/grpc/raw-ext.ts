import { isUtf8 } from 'node:buffer';
import {
  EXT_FIELD,
  EXT_PARAMS_FIELD,
  LENGTH_DELIMITED,
  fieldHeader,
  forEachField,
  type ExtendedRequestProto,
} from '../../proto/src/index.js';

/**
 * A large ext call's `ExtendedRequestProto`, kept as the caller's bytes and written into the service's
 * message as they are, instead of being decoded into objects and encoded again: for the largest map
 * the limits allow (1024 params, 4 MiB) that took 8.4 ms of CPU in one piece on the event loop for
 * every such call, 3.3 ms now, most of it the checks and copies (issue 25, the hostile bench's
 * `grpc-ext-max`).
 * Read in the gateway (an in-process instance does), it is decoded once, on first use.
 */
export class RawExt implements ExtendedRequestProto {
  readonly bytes: Buffer;
  readonly #decode: (bytes: Buffer) => ExtendedRequestProto;
  #decoded: ExtendedRequestProto | undefined;

  constructor(bytes: Buffer, decode: (bytes: Buffer) => ExtendedRequestProto) {
    this.bytes = bytes;
    this.#decode = decode;
  }

  get methodName(): string | undefined {
    return this.#value().methodName;
  }

  get params(): ExtendedRequestProto['params'] {
    return this.#value().params;
  }

  #value(): ExtendedRequestProto {
    return (this.#decoded ??= this.#decode(this.bytes));
  }
}

/** Ext maps smaller than this are decoded and encoded as any message: their cost is small. */
export const RAW_EXT_MIN_BYTES = 64 * 1024;

/**
 * Whether `bytes[start, end)` is an ExtendedRequestProto every decoder reads as the gateway would: only
 * its known fields, each of its wire type, strings that are UTF-8 (Python's and Java's decoders refuse
 * a message whose string is not, which would break the service's whole stream), lengths within their
 * message. Anything else takes the decoding path, which writes a clean message.
 */
export function isPlainExt(bytes: Buffer, start: number, end: number): boolean {
  // ExtendedRequestProto: methodName = 1 (string), params = 2 (map entry).
  return walk(bytes, start, end, (field, from, to) =>
    field === 1 ? isUtf8(bytes.subarray(from, to)) : field === EXT_PARAMS_FIELD && isPlainEntry(bytes, from, to),
  );
}

/** A params map entry: key = 1 (string), value = 2 (PayloadProto: dataType = 1 and json = 101 strings, protobuf = 102 bytes). */
function isPlainEntry(bytes: Buffer, start: number, end: number): boolean {
  return walk(bytes, start, end, (field, from, to) => {
    if (field === 1) return isUtf8(bytes.subarray(from, to));
    if (field !== 2) return false;
    return walk(bytes, from, to, (inner, a, b) => (inner === 1 || inner === 101 ? isUtf8(bytes.subarray(a, b)) : inner === 102));
  });
}

/** Calls `field` for each field of `bytes[start, end)`; false at a field not length-delimited, a malformed message or a false answer. */
function walk(bytes: Buffer, start: number, end: number, field: (number: number, from: number, to: number) => boolean): boolean {
  return forEachField(bytes, start, end, (number, wireType, _record, from, to) => wireType === LENGTH_DELIMITED && field(number, from, to));
}

/**
 * A service message whose `ext` is a RawExt, in pieces: `head`, the rest of the message encoded and the
 * ext field's tag and length, then `raw`, the caller's bytes (fields may come in any order). Undefined
 * for any other message.
 */
export function rawExtPieces<T extends { ext?: unknown }>(
  message: T,
  serialize: (message: T) => Buffer,
): { head: readonly Buffer[]; raw: Buffer } | undefined {
  if (!(message.ext instanceof RawExt)) return undefined;
  const raw = message.ext.bytes;
  return { head: [serialize({ ...message, ext: undefined }), fieldHeader(EXT_FIELD, raw.length)], raw };
}

/**
 * The service stream's serializer with raw ext support: a GateToServiceProto whose `ext` is a RawExt
 * is written whole from its pieces (where the call cannot take them apart, raw-ext-writes.ts).
 */
export function withRawExt<T extends { ext?: unknown }>(serialize: (message: T) => Buffer): (message: T) => Buffer {
  return (message) => {
    const pieces = rawExtPieces(message, serialize);
    return pieces ? Buffer.concat([...pieces.head, pieces.raw]) : serialize(message);
  };
}
