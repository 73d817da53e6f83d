/**
 * Protobuf's wire format, read and written by hand where a large message is taken apart without being
 * decoded whole: the gateway forwards a large ext's bytes as the caller sent them, and the SDK decodes
 * such an ext's params a slice at a time. Everything else goes through the generated decoders.
 */

/**
 * A protobuf base-128 varint at `pos` (up to 2^53), read before `end`; undefined when the bytes end
 * inside it.
 */
export function readVarint(bytes: Buffer, pos: number, end = bytes.length): { value: number; next: number } | undefined {
  let value = 0;
  let scale = 1;
  for (let i = 0; i < 10; i++) {
    if (pos >= end) return undefined;
    const byte = bytes[pos++]!;
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) return { value, next: pos };
    scale *= 128;
  }
  return undefined;
}

/** The tag and length of a length-delimited `field` of `length` bytes. */
export function fieldHeader(field: number, length: number): Buffer {
  const out: number[] = [];
  for (const start of [field * 8 + 2, length])
    for (let value = start; ; value = Math.floor(value / 128)) {
      if (value < 128) {
        out.push(value);
        break;
      }
      out.push((value % 128) | 0x80);
    }
  return Buffer.from(out);
}

/** The field number of `ext` in ClientRequestProto and in GateToServiceProto alike (gate.proto). */
export const EXT_FIELD = 103;
/** The field number of `params` in ExtendedRequestProto (gate.proto). */
export const EXT_PARAMS_FIELD = 2;

/** One field of a message as it lies in the bytes: the whole record from its tag, and its value. */
export interface FieldRecord {
  field: number;
  wireType: number;
  /** Where the record starts (its tag). */
  start: number;
  /** Where its value starts: for a length-delimited field, after the length. */
  valueStart: number;
  end: number;
}

/** protobuf's wire types (groups, 3 and 4, are deprecated and read as malformed here); the one of strings and messages is exported. */
const VARINT = 0;
const FIXED64 = 1;
export const LENGTH_DELIMITED = 2;
const FIXED32 = 5;

/** Called for each field of a message: false stops the walk (and makes it false). */
export type FieldVisitor = (field: number, wireType: number, start: number, valueStart: number, end: number) => boolean;

/**
 * Calls `visit` for each field of the message in `bytes[start, end)`, in wire order, allocating
 * nothing; false when the bytes are not a well-formed message (a group, a length past the end), for
 * the generated decoder to name, or when `visit` answered false.
 */
export function forEachField(bytes: Buffer, start: number, end: number, visit: FieldVisitor): boolean {
  let pos = start;
  while (pos < end) {
    const tag = readVarint(bytes, pos, end);
    if (!tag) return false;
    const wireType = tag.value % 8;
    let valueStart = tag.next;
    let valueEnd: number;
    if (wireType === VARINT) {
      const value = readVarint(bytes, tag.next, end);
      if (!value) return false;
      valueEnd = value.next;
    } else if (wireType === LENGTH_DELIMITED) {
      const length = readVarint(bytes, tag.next, end);
      if (!length) return false;
      valueStart = length.next;
      valueEnd = length.next + length.value;
    } else if (wireType === FIXED64) valueEnd = tag.next + 8;
    else if (wireType === FIXED32) valueEnd = tag.next + 4;
    else return false;
    if (valueEnd > end || !visit(Math.floor(tag.value / 8), wireType, pos, valueStart, valueEnd)) return false;
    pos = valueEnd;
  }
  return true;
}

/** The fields of the message in `bytes[start, end)`, in wire order; undefined when it is not well-formed (forEachField). */
export function fieldRecords(bytes: Buffer, start = 0, end = bytes.length): FieldRecord[] | undefined {
  const records: FieldRecord[] = [];
  const read = forEachField(bytes, start, end, (field, wireType, recordStart, valueStart, recordEnd) => {
    records.push({ field, wireType, start: recordStart, valueStart, end: recordEnd });
    return true;
  });
  return read ? records : undefined;
}
