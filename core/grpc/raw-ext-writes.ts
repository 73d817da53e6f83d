import * as grpc from '@grpc/grpc-js';
import type { GateToServiceProto } from '../../proto/src/index.js';
import { callInternals } from './grpc-call-internals.js';
import { rawExtPieces } from './raw-ext.js';

/** gRPC's prefix of every message: a compressed flag and a 4-byte length. */
const PREFIX_BYTES = 5;

/** Whether the last service stream got the writes in pieces (see below); exposed for the test. */
export let rawExtInPieces = true;

/**
 * A service stream's message that carries a large ext call (a RawExt) goes out as two writes on the
 * HTTP/2 stream: the gRPC prefix with the rest of the message and the ext field's tag, then the caller's
 * bytes as they are. Through the method's serializer (withRawExt) the caller's 4 MiB were copied
 * twice, into the message and again into grpc-js's framed buffer, and V8 counts such buffers against
 * its old-generation limit until a full collection: the hostile bench's largest ext call cost the
 * gateway 70-74 ms of CPU a call whole, 55-66 ms in pieces, with a quarter fewer full collections
 * (docs/benchmarks.md, issue 25).
 *
 * grpc-js has no API for a message in pieces, so this replaces its call's `sendMessage` and does what
 * that does: nothing after a cancel, the response headers first, the call's size limit (over it,
 * grpc-js's own path refuses the message), a failed write as INTERNAL, the channelz count. Every other
 * message takes grpc-js's path. Returns false, changing nothing, when the call lacks a field this needs
 * (a grpc-js that moved one); the serializer then still writes such messages whole.
 */
export function writeRawExtInPieces(call: object, serialize: (message: GateToServiceProto) => Buffer): boolean {
  const internals = callInternals(call);
  const { sendMessage, checkCancelled, maybeSendMetadata, sendStatus, stream } = internals;
  rawExtInPieces =
    typeof sendMessage === 'function' &&
    typeof checkCancelled === 'function' &&
    typeof maybeSendMetadata === 'function' &&
    typeof sendStatus === 'function' &&
    typeof stream?.write === 'function' &&
    typeof internals.maxSendMessageSize === 'number';
  if (!rawExtInPieces) return false;
  internals.sendMessage = function (this: unknown, message, callback) {
    const pieces = rawExtPieces(message as GateToServiceProto, serialize);
    if (!pieces) return sendMessage!.call(this, message, callback);
    const length = pieces.head.reduce((n, piece) => n + piece.length, pieces.raw.length);
    const limit = internals.maxSendMessageSize!;
    if (limit !== -1 && length > limit) return sendMessage!.call(this, message, callback);
    if (checkCancelled!.call(this)) return;
    const prefix = Buffer.alloc(PREFIX_BYTES);
    prefix.writeUInt32BE(length, 1); // after the compressed flag, 0
    maybeSendMetadata!.call(this);
    // Both writes are queued at once, in order: no other message of the stream can come between them.
    stream!.write(Buffer.concat([prefix, ...pieces.head]));
    stream!.write(pieces.raw, (err?: Error | null) => {
      if (err) {
        sendStatus!.call(this, { code: grpc.status.INTERNAL, details: 'Internal server error', metadata: null });
        return;
      }
      internals.callEventTracker?.addMessageSent?.();
      callback();
    });
  };
  return true;
}
