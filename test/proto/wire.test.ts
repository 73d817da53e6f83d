import { describe, expect, it } from 'vitest';
import { fieldHeader, fieldRecords, gateServiceDefinition, readVarint } from '../../proto/src/index.js';

const method = gateServiceDefinition().processAsync;

describe("protobuf's wire format, read by hand (proto/src/wire.ts)", () => {
  it('lists the fields of a message in wire order, each with its whole record and its value', () => {
    const bytes = method.responseSerialize({ requestId: 300, headers: { a: 'b' }, ext: { methodName: 'm' } });
    const records = fieldRecords(bytes)!;
    expect(records.map((record) => [record.field, record.wireType])).toEqual([
      [1, 0],
      [103, 2],
      [1000, 2],
    ]);
    expect(records[0]!.start).toBe(0);
    expect(records.at(-1)!.end).toBe(bytes.length);
    expect(readVarint(bytes, records[0]!.valueStart)!.value).toBe(300);
    const ext = records[1]!;
    expect(bytes.subarray(ext.start, ext.valueStart)).toEqual(fieldHeader(103, ext.end - ext.valueStart));
    expect(fieldRecords(bytes, ext.valueStart, ext.end)!.map((record) => record.field)).toEqual([1]);
  });

  it('reads fixed-width fields and refuses groups and lengths past the end', () => {
    expect(fieldRecords(Buffer.from([0x09, 1, 2, 3, 4, 5, 6, 7, 8, 0x15, 1, 2, 3, 4]))!.map((r) => [r.field, r.end])).toEqual([
      [1, 9],
      [2, 14],
    ]);
    expect(fieldRecords(Buffer.from([0x0b, 0x0c]))).toBeUndefined(); // a group
    expect(fieldRecords(Buffer.from([0x0a, 5, 1, 2]))).toBeUndefined(); // 5 bytes announced, 2 there
    expect(fieldRecords(Buffer.from([0x08, 0x80]))).toBeUndefined(); // a varint cut short
  });

  it('writes a tag and a length as varints', () => {
    expect(fieldHeader(1, 3)).toEqual(Buffer.from([0x0a, 3]));
    expect(fieldHeader(103, 300)).toEqual(Buffer.from([0xba, 0x06, 0xac, 0x02]));
  });
});
