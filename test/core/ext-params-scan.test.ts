import { describe, expect, it } from 'vitest';
import { gateServiceDefinition } from '../../proto/src/index.js';
import { preflight } from '../../core/grpc/client-message.js';
import { ExtParamsScan } from '../../core/grpc/ext-params-scan.js';

const serialize = (m: object) => gateServiceDefinition().process!.requestSerialize(m) as Buffer;
const limits = {
  maxMessageBytes: 64 * 1024 * 1024,
  maxHeaders: 64,
  maxHeaderBytes: 64 * 1024,
  maxExtParams: 1024,
  maxExtParamBytes: 256 * 1024,
};
const head = { account: 'demo', model: 'echo', authToken: 'k-123', headers: { trace: 'x'.repeat(300) } };
const params = (count: number, value: string) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`p${i}`, { json: value }]));

/** The message framed as on the wire, in chunks of `size` bytes; the scan's refusal code, or undefined. */
function scan(message: Buffer, size: number): string | undefined {
  const framed = Buffer.alloc(5 + message.length);
  framed.writeUInt32BE(message.length, 1);
  message.copy(framed, 5);
  const scanner = new ExtParamsScan(limits);
  for (let at = 0; at < framed.length; at += size) {
    const refused = scanner.push(framed.subarray(at, at + size));
    if (refused) return `${refused.code}: ${refused.args.reason as string}`;
  }
  return undefined;
}

describe('ext params counted as the message arrives (core/grpc/ext-params-scan.ts)', () => {
  const cases = {
    'one entry more than extMaxParams': serialize({ ...head, ext: { methodName: 'ping', params: params(1025, 'v') } }),
    'as many entries as allowed': serialize({ ...head, ext: { methodName: 'ping', params: params(1024, 'v') } }),
    'bytes over extMaxParamBytes': serialize({ ...head, ext: { methodName: 'ping', params: params(70, 'v'.repeat(4000)) } }),
    'bytes within it': serialize({ ...head, ext: { methodName: 'ping', params: params(60, 'v'.repeat(4000)) } }),
    'a predict, no ext': serialize({ ...head, predict: { data: { json: 'x'.repeat(100_000) } } }),
  };

  // Whatever the chunks (one byte, a varint split across two, HTTP/2's 16 KiB), the scan agrees with the preflight.
  for (const [name, message] of Object.entries(cases)) {
    it(`${name}: the same answer as the preflight of the whole message, in chunks of any size`, () => {
      const whole = preflight(message, limits).refused;
      const expected = whole ? `${whole.code}: ${whole.args.reason as string}` : undefined;
      for (const size of [1, 3, 7, 1000, 16 * 1024, message.length + 5]) expect(scan(message, size), `chunks of ${size}`).toBe(expected);
    });
  }

  it('refuses a flood within its first kilobytes', () => {
    const flood = serialize({ ...head, ext: { methodName: 'ping', params: params(5000, '') } });
    const framed = Buffer.alloc(5 + flood.length);
    framed.writeUInt32BE(flood.length, 1);
    flood.copy(framed, 5);
    const scanner = new ExtParamsScan(limits);
    expect(scanner.push(framed.subarray(0, 16 * 1024))?.code).toBe('EXT_PARAMS_TOO_LARGE');
    expect(scanner.refused?.code).toBe('EXT_PARAMS_TOO_LARGE');
  });
});
