import type * as grpc from '@grpc/grpc-js';
import { callInternals, type GrpcJsCallInternals } from './grpc-call-internals.js';

/** grpc-js's decoder state while it gathers a message's chunks (its ReadState.READING_MESSAGE). */
const READING_MESSAGE = 2;

/** Whether the last call's decoder could be wrapped (see below); exposed for the test. */
export let chunksReleased = true;

/**
 * grpc-js's decoder keeps the chunks of the last message it gathered (`readPartialMessage`) until the
 * next message begins, which on a unary call is never. A call that lived a little (waiting on its
 * account's input rate, for an instance; every service stream) is in V8's old generation by then, and
 * a scavenge keeps whatever an old object points to, dead or not: the chunks of every large message
 * stayed until a full collection. V8 also counts those buffers against its external-memory limit, and
 * past it starts that full collection with marking steps on the event loop at every new buffer: in
 * the hostile bench each served 4 MiB ext call left 8.4 MB that no scavenge freed (these chunks and
 * the message gathered from them, client-message.ts), a mark-compact followed every five to eight such
 * calls, and another account's chat answers waited 40-90 ms behind each (docs/benchmarks.md, issue 25).
 *
 * This drops the list once a message is out, as the decoder itself does when the next one starts.
 * When the fields are missing (a grpc-js that moved them) nothing changes but `chunksReleased`;
 * test/security/large-message-garbage.test.ts fails then, so an upgrade cannot lose this silently.
 */
export function releaseGatheredChunks(internals: GrpcJsCallInternals): boolean {
  const decoder = internals.decoder;
  const write = decoder?.write;
  if (!decoder || typeof write !== 'function' || !Array.isArray(decoder.readPartialMessage) || typeof decoder.readState !== 'number')
    return false;
  decoder.write = function (this: typeof decoder, data: Buffer) {
    const messages = write.call(this, data);
    if (this.readState !== READING_MESSAGE && this.readPartialMessage!.length > 0) this.readPartialMessage = [];
    return messages;
  };
  return true;
}

/** The interceptor: every call's decoder lets go of a message's chunks once the message is out. */
export function releaseGatheredChunksInterceptor(): grpc.ServerInterceptor {
  return (_method, call) => {
    chunksReleased = releaseGatheredChunks(callInternals(call));
    // grpc-js types an interceptor's result as its class; the base call it passes is used as is.
    return call as grpc.ServerInterceptingCall;
  };
}
