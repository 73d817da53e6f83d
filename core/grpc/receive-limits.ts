import * as grpc from '@grpc/grpc-js';
import { gatewayError } from '../errors.js';
import { beforeStatus, callInternals, callOfStream, type CallStatus } from './grpc-call-internals.js';

/**
 * Per-call receive limits for gRPC. grpc-js reads each message's 5-byte length prefix and refuses a
 * message over `grpc.max_receive_message_length` (RESOURCE_EXHAUSTED) before buffering its body, but
 * that option is server-wide, and service streams need 128 MiB while a client call needs a few MiB.
 * An interceptor runs right after grpc-js builds a call and before any of its data is read, so it can
 * narrow that call's limit: client calls get their own small limit, and a `processAsync` stream gets
 * the registration limit until it has registered, when the Gate raises it to the service limit.
 * (Wrapping the call in a grpc-js ServerInterceptingCall to find it later let a service's half-close
 * overtake its last answer; test/gate/sdk-integration.test.ts caught it. The handler reaches the call
 * through its stream instead.)
 *
 * grpc-js has no public per-call setting for this, so the interceptor sets the two fields its call
 * object reads (`decoder.maxReadMessageLength`, `maxReceiveMessageSize`). When they are missing (a
 * grpc-js that moved them) `narrowed` reports false and the deserializers' own size checks still
 * refuse a large message, only after it was received; test/security/grpc-client-limits.test.ts fails
 * then, so an upgrade cannot lose the early refusal silently.
 */
export interface ReceiveLimitHandle {
  /** Sets this call's receive limit; false when grpc-js did not expose the fields to set. */
  set(bytes: number): boolean;
}

/** grpc-js's own words for a message refused from its length prefix: `(<size> vs <limit>)`. */
const TOO_LARGE = /^Received message larger than max \((\d+) vs\.? (\d+)\)/;

/**
 * The call's refusal of a message over its limit as a coded error like every other refusal:
 * RESOURCE_EXHAUSTED with details `MESSAGE_TOO_LARGE: <catalog message>` instead of grpc-js's text.
 */
function codeTooLarge(status: CallStatus): CallStatus | void {
  const match = status.code === grpc.status.RESOURCE_EXHAUSTED ? TOO_LARGE.exec(status.details) : null;
  if (!match) return;
  const err = gatewayError('MESSAGE_TOO_LARGE', { args: { size: Number(match[1]), limit: Number(match[2]) } });
  return { ...status, details: `${err.code}: ${err.message}` };
}

function handleOf(call: object): ReceiveLimitHandle {
  const internals = callInternals(call);
  return {
    set(bytes) {
      if (typeof internals.decoder?.maxReadMessageLength !== 'number' || typeof internals.maxReceiveMessageSize !== 'number') return false;
      internals.decoder.maxReadMessageLength = bytes;
      internals.maxReceiveMessageSize = bytes;
      return true;
    },
  };
}

/** Whether the last narrowing worked (see the class comment); exposed for the test and the boot log. */
export let narrowed = true;

/** The interceptor: `limitOf(path)` gives a method's limit (undefined: the server-wide one). */
export function receiveLimitInterceptor(limitOf: (path: string) => number | undefined): grpc.ServerInterceptor {
  return (method, call) => {
    const limit = limitOf(method.path);
    if (limit !== undefined) {
      narrowed = handleOf(call).set(limit);
      beforeStatus(callInternals(call), codeTooLarge);
    }
    // grpc-js types an interceptor's result as its class; the base call it passes is used as is.
    return call as grpc.ServerInterceptingCall;
  };
}

/** The receive-limit handle of a call, from the stream object its handler got. */
export function receiveLimitOf(stream: object): ReceiveLimitHandle {
  return handleOf(callOfStream(stream));
}
