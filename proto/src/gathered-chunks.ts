/** The fields of grpc-js's message decoder (its StreamDecoder) that releaseGatheredChunks reaches into. */
export interface GrpcJsDecoder {
  /** Takes a chunk of the stream's bytes, returns the messages it completed. */
  write?: (data: Buffer) => Buffer[];
  /** Its state: reading a message's prefix, its body (2) or nothing. */
  readState?: number;
  /** The chunks of the message being gathered (of the last one, until the next begins). */
  readPartialMessage?: Buffer[];
}

/** grpc-js's decoder state while it gathers a message's chunks (its ReadState.READING_MESSAGE). */
const READING_MESSAGE = 2;

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
 * This empties the list once a message is out, as the decoder itself drops it when the next one
 * starts, and empties in place every list the decoder drops: a list begun before its call became old
 * is an old object too, and dropped whole it is old garbage whose slots a scavenge still follows to the
 * chunks (V8's remembered set knows no dead old objects). Dropped so, until 2026-11-28, the chunks of
 * every served 4 MiB ext call survived until a mark-compact: the gateway's Buffers grew 4-8 MB a second
 * under the hostile bench's costliest attack, V8 started a mark-compact on external memory every 8-10 s,
 * and each one's 60-100 ms of stalls held 10-15 of another account's 21 slowest answers in a 10 s run.
 * Emptied in place, the list's elements are gone with its contents, and the chunks die young.
 *
 * The gateway wraps the decoder of each gRPC call it serves (core/grpc/gathered-chunks.ts); a service
 * on the SDK wraps grpc-js's decoder class once, for its streams to every gateway (its echo service's
 * Buffers grew 4 MB a second the same way). Returns false, changing nothing, when the fields are
 * missing (a grpc-js that moved them); the tests fail then, so an upgrade cannot lose this silently.
 */
export function releaseGatheredChunks(decoder: GrpcJsDecoder): boolean {
  if (!hasDecoderFields(decoder, decoder)) return false;
  // A decoder of a class wrapped already (releaseGatheredChunksOfClass) would do the work twice a chunk.
  if (!wrappedClasses.has(decoder.constructor)) decoder.write = wrappedWrite(decoder.write!);
  return true;
}

/**
 * The same for every decoder of grpc-js's class `decoderClass` (its StreamDecoder, as the caller's
 * grpc-js resolves it), once: its prototype's `write` is wrapped, after a decoder of it showed the fields.
 */
export function releaseGatheredChunksOfClass(decoderClass: new (maxReadMessageLength: number) => object): boolean {
  if (wrappedClasses.has(decoderClass)) return true;
  const prototype = decoderClass.prototype as GrpcJsDecoder;
  if (!hasDecoderFields(new decoderClass(-1), prototype)) return false;
  prototype.write = wrappedWrite(prototype.write!);
  wrappedClasses.add(decoderClass);
  return true;
}

/** The decoder classes whose prototype is wrapped already. */
const wrappedClasses = new WeakSet<object>();

/** Whether `decoder` has the state the wrapper reads, and `writer` (it, or its prototype) the `write` it wraps. */
function hasDecoderFields(decoder: GrpcJsDecoder, writer: GrpcJsDecoder): boolean {
  return typeof writer.write === 'function' && Array.isArray(decoder.readPartialMessage) && typeof decoder.readState === 'number';
}

function wrappedWrite(write: (data: Buffer) => Buffer[]): (data: Buffer) => Buffer[] {
  return function (this: GrpcJsDecoder, data: Buffer) {
    const gathering = this.readPartialMessage!;
    const messages = write.call(this, data);
    // grpc-js begins each message with a new list, dropping the last one as it is.
    if (this.readPartialMessage !== gathering) gathering.length = 0;
    if (this.readState !== READING_MESSAGE) this.readPartialMessage!.length = 0;
    return messages;
  };
}
