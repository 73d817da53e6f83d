/**
 * A protobuf base-128 varint at `pos` (up to 2^53), read before `end`; undefined when the bytes end
 * inside it. The one reader of the gRPC wing's hand-read messages (client-message.ts, raw-ext.ts).
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
