import type { Http2Stream } from 'node:http2';
import type * as grpc from '@grpc/grpc-js';
import type { GrpcJsDecoder } from '../../proto/src/index.js';

/** A status as grpc-js's server call sends it. */
export interface CallStatus {
  code: grpc.status;
  details: string;
  metadata?: grpc.Metadata | null;
}

/**
 * The fields of grpc-js's server call (its BaseServerInterceptingCall) that the gateway's
 * interceptors reach into, in this one place: grpc-js has no public per-call receive limit, no
 * access to the HTTP/2 stream, and no hook on the status a call sends. Every field is optional:
 * a grpc-js that moved one leaves it undefined, and the tests of receive limits and unauthenticated
 * bytes fail then, so an upgrade cannot lose them silently.
 */
export interface GrpcJsCallInternals {
  stream?: Http2Stream;
  decoder?: GrpcJsDecoder & { maxReadMessageLength?: number };
  maxReceiveMessageSize?: number;
  sendStatus?: (status: CallStatus) => void;
  /** Serializes a response with the method's serializer and writes it (its metadata first). */
  sendMessage?: (message: unknown, callback: () => void) => void;
  /** True (and the call answered) when the call was cancelled: nothing more may be written. */
  checkCancelled?: () => boolean;
  /** Sends the response headers unless they went already: due before a call's first message. */
  maybeSendMetadata?: () => void;
  /** The largest message the call may send (-1: no limit). */
  maxSendMessageSize?: number;
  /** Counts a sent message for channelz, as grpc-js's own sendMessage does. */
  callEventTracker?: { addMessageSent?: () => void };
}

export function callInternals(call: object): GrpcJsCallInternals {
  return call as GrpcJsCallInternals;
}

/**
 * The call behind the stream object a handler got: grpc-js keeps the call the interceptors returned
 * (here: its own base call, unwrapped) in the stream's `call` field. An empty object when it moved.
 */
export function callOfStream(stream: object): object {
  return (stream as { call?: object }).call ?? {};
}

/**
 * Runs `before` on every status the call sends (grpc-js's own refusals included), before it goes;
 * it may return the status rewritten. The call's own `sendStatus` is wrapped in place: the call
 * object must stay grpc-js's (receive-limits.ts says why).
 */
export function beforeStatus(internals: GrpcJsCallInternals, before: (status: CallStatus) => CallStatus | void): void {
  const send = internals.sendStatus;
  if (typeof send !== 'function') return;
  internals.sendStatus = function (this: unknown, status) {
    send.call(this, before(status) ?? status);
  };
}
