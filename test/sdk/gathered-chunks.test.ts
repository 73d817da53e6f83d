/**
 * The SDK's grpc-js decoders let go of a message's chunks once the message is out (sdk/grpc.ts, the
 * protocol's releaseGatheredChunks): grpc-js keeps them until the next message begins, and on a
 * service's long-lived stream a list so kept, or dropped once old, held every large request's chunks
 * until a mark-compact (the echo service's Buffers grew 4 MB a second under the hostile bench's
 * costliest attack, and stopped growing with every decoder of its grpc-js wrapped, 2026-11-28).
 * test/security/large-message-garbage.test.ts measures the memory; this checks the SDK's decoders are
 * the wrapped ones.
 */
import { StreamDecoder } from '@grpc/grpc-js/build/src/stream-decoder.js';
import { describe, expect, it } from 'vitest';
import { createGateStub, decodersReleaseChunks } from '../../sdk/grpc.js';

/** A gRPC-framed message of `bytes` bytes. */
function framed(bytes: number): Buffer {
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(bytes, 1);
  return Buffer.concat([prefix, Buffer.alloc(bytes, 3)]);
}

describe("the SDK's message decoders", () => {
  it('keep no chunk of a message once it is out, and still frame every message', () => {
    createGateStub('127.0.0.1:1').close();
    expect(decodersReleaseChunks).toBe(true);
    const decoder = new StreamDecoder(-1);
    const seen = decoder as unknown as { readPartialMessage: Buffer[] };
    const message = framed(100_000);
    const out = [decoder.write(message.subarray(0, 40_000)), decoder.write(message.subarray(40_000, 70_000))];
    // Within a message the chunks are gathered as grpc-js does.
    expect(seen.readPartialMessage.length).toBe(2);
    out.push(decoder.write(message.subarray(70_000)));
    // grpc-js alone keeps the message's three chunks until the next message begins.
    expect(seen.readPartialMessage).toEqual([]);
    out.push(decoder.write(Buffer.concat([framed(7), framed(0)])));
    expect(out.map((messages) => messages.map((m) => m.length))).toEqual([[], [], [100_005], [12, 5]]);
  });
});
