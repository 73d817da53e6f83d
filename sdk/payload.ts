import type { PayloadProto } from '@model-gateway/protocol';

/** A payload that cannot be read the way the caller asked (bad JSON, missing body, wrong kind). */
export class PayloadError extends Error {
  override readonly name = 'PayloadError';
}

/** `PayloadProto{json}`: the value JSON-encoded, with an optional `dataType` (the class name of the value). */
export function jsonPayload(value: unknown, dataType?: string): PayloadProto {
  const json = JSON.stringify(value);
  if (json === undefined) throw new PayloadError(`A ${typeof value} cannot be encoded as JSON`);
  return dataType === undefined ? { json } : { dataType, json };
}

/** `PayloadProto{json}` from JSON text that is already encoded; it is sent as is. */
export function rawJsonPayload(json: string, dataType?: string): PayloadProto {
  return dataType === undefined ? { json } : { dataType, json };
}

/** `PayloadProto{protobuf}`: raw protobuf bytes (or any binary body), with an optional `dataType`. */
export function protobufPayload(bytes: Uint8Array, dataType?: string): PayloadProto {
  const protobuf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return dataType === undefined ? { protobuf } : { dataType, protobuf };
}

const PAYLOAD_KEYS = new Set(['dataType', 'json', 'protobuf', 'body']);

/**
 * True for an object shaped exactly like a PayloadProto: a string `json` or binary `protobuf`, optionally
 * a string `dataType`, and no other keys. Used to tell a ready payload from a plain value to JSON-encode.
 */
export function isPayloadProto(value: unknown): value is PayloadProto {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) if (!PAYLOAD_KEYS.has(key)) return false;
  const hasJson = typeof record.json === 'string';
  const hasBytes = record.protobuf instanceof Uint8Array;
  if (hasJson === hasBytes) return false;
  return record.dataType === undefined || typeof record.dataType === 'string';
}

/** Which member of the payload's `body` oneof is set. */
export function payloadKind(proto: PayloadProto | undefined): 'json' | 'protobuf' | 'empty' {
  if (!proto) return 'empty';
  if (proto.body === 'json' || (proto.body === undefined && typeof proto.json === 'string')) return 'json';
  if (proto.body === 'protobuf' || (proto.body === undefined && proto.protobuf !== undefined)) return 'protobuf';
  return 'empty';
}

/** The JSON value of a payload; throws PayloadError when the payload is not JSON or does not parse. */
export function readJson<T = unknown>(proto: PayloadProto | undefined, what = 'payload'): T {
  const kind = payloadKind(proto);
  if (kind !== 'json' || proto?.json === undefined) {
    throw new PayloadError(kind === 'empty' ? `The ${what} is empty` : `The ${what} is protobuf, not JSON`);
  }
  try {
    return JSON.parse(proto.json) as T;
  } catch (err) {
    throw new PayloadError(`The ${what} is not valid JSON: ${(err as Error).message}`);
  }
}

/** A read-only view of an incoming PayloadProto with typed accessors. */
export class Payload {
  constructor(
    readonly proto: PayloadProto = {},
    private readonly what = 'payload',
  ) {}

  /** The class name of what is encoded in the body, when the sender gave one. */
  get dataType(): string | undefined {
    return this.proto.dataType;
  }

  get kind(): 'json' | 'protobuf' | 'empty' {
    return payloadKind(this.proto);
  }

  /** The JSON text as received (undefined for a protobuf or empty payload). */
  get text(): string | undefined {
    return this.kind === 'json' ? this.proto.json : undefined;
  }

  /** The raw protobuf bytes (undefined for a JSON or empty payload). */
  get bytes(): Buffer | undefined {
    return this.kind === 'protobuf' ? this.proto.protobuf : undefined;
  }

  /** The parsed JSON value; a PayloadError (a bad request, when thrown in a handler) when it is not JSON. */
  json<T = unknown>(): T {
    return readJson<T>(this.proto, this.what);
  }

  /**
   * A Payload inside a value a handler returns is encoded as what it carries (its JSON value, or its
   * text when that is not JSON; protobuf bytes in base64; empty as null), never as this wrapper.
   */
  toJSON(): unknown {
    if (this.kind === 'protobuf') return this.bytes?.toString('base64');
    const text = this.text;
    if (text === undefined) return null;
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  }
}
