import * as grpc from '@grpc/grpc-js';
import { gatewayError } from '../errors.js';

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

interface GrpcJsCallInternals {
  decoder?: { maxReadMessageLength?: number };
  maxReceiveMessageSize?: number;
  sendStatus?: (status: { code: grpc.status; details?: string; metadata?: grpc.Metadata | null }) => void;
}

/** grpc-js's own words for a message refused from its length prefix: `(<size> vs <limit>)`. */
const TOO_LARGE = /^Received message larger than max \((\d+) vs\.? (\d+)\)/;

/**
 * Makes the call's refusal of a message over its limit a coded error like every other refusal:
 * RESOURCE_EXHAUSTED with details `MESSAGE_TOO_LARGE: <catalog message>` instead of grpc-js's text.
 * The refusal is the base call's own `sendStatus`, so the instance method is wrapped in place (the
 * call object itself must stay grpc-js's, see above).
 */
function codeTooLarge(internals: GrpcJsCallInternals): void {
  const send = internals.sendStatus;
  if (typeof send !== 'function') return;
  internals.sendStatus = function (this: unknown, status) {
    const match = status.code === grpc.status.RESOURCE_EXHAUSTED ? TOO_LARGE.exec(status.details ?? '') : null;
    if (match) {
      const err = gatewayError('MESSAGE_TOO_LARGE', { args: { size: Number(match[1]), limit: Number(match[2]) } });
      status = { ...status, details: `${err.code}: ${err.message}` };
    }
    send.call(this, status);
  };
}

const coded = new WeakSet<object>();

function handleOf(call: grpc.ServerInterceptingCallInterface): ReceiveLimitHandle {
  const internals = call as unknown as GrpcJsCallInternals;
  return {
    set(bytes) {
      if (typeof internals.decoder?.maxReadMessageLength !== 'number' || typeof internals.maxReceiveMessageSize !== 'number') return false;
      if (!coded.has(internals)) {
        codeTooLarge(internals);
        coded.add(internals);
      }
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
    if (limit !== undefined) narrowed = handleOf(call).set(limit);
    // grpc-js types an interceptor's result as its class; the base call it passes is used as is.
    return call as grpc.ServerInterceptingCall;
  };
}

/**
 * The receive-limit handle of a call, from the stream object its handler got: grpc-js keeps the call
 * the interceptors returned (here: its own base call, unwrapped) in the stream's `call` field.
 */
export function receiveLimitOf(stream: object): ReceiveLimitHandle {
  return handleOf((stream as { call?: grpc.ServerInterceptingCallInterface }).call ?? ({} as grpc.ServerInterceptingCallInterface));
}
