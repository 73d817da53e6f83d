import * as grpc from '@grpc/grpc-js';

/**
 * Per-call receive limits for gRPC. grpc-js reads each message's 5-byte length prefix and refuses a
 * message over `grpc.max_receive_message_length` (RESOURCE_EXHAUSTED) before buffering its body, but
 * that option is server-wide, and service streams need 128 MiB while a client call needs a few MiB.
 * An interceptor runs right after grpc-js builds a call and before any of its data is read, so it can
 * narrow that call's limit: client calls get their own small limit, and a `processAsync` stream gets
 * the registration limit until it has registered, when the Gate raises it to the service limit.
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
}

function handleOf(call: grpc.ServerInterceptingCallInterface): ReceiveLimitHandle {
  const internals = call as unknown as GrpcJsCallInternals;
  return {
    set(bytes) {
      if (typeof internals.decoder?.maxReadMessageLength !== 'number' || typeof internals.maxReceiveMessageSize !== 'number') return false;
      internals.decoder.maxReadMessageLength = bytes;
      internals.maxReceiveMessageSize = bytes;
      return true;
    },
  };
}

/** Handles of the calls that may be raised later, found by the call's Metadata (which the handler sees). */
const raisable = new WeakMap<grpc.Metadata, ReceiveLimitHandle>();

/** Whether the last narrowing worked (see the class comment); exposed for the test and the boot log. */
export let narrowed = true;

/**
 * The interceptor: `limitOf(path)` gives a method's initial limit (undefined: the server-wide one).
 * Methods listed in `raisableMethods` keep a handle the handler can reach with `receiveLimitOf`.
 */
export function receiveLimitInterceptor(limitOf: (path: string) => number | undefined, raisableMethods: ReadonlySet<string>): grpc.ServerInterceptor {
  return (method, call) => {
    const limit = limitOf(method.path);
    // grpc-js types an interceptor's result as its class; the base call it passes is used as is.
    const unchanged = call as grpc.ServerInterceptingCall;
    if (limit === undefined) return unchanged;
    const handle = handleOf(call);
    narrowed = handle.set(limit);
    if (!raisableMethods.has(method.path)) return unchanged;
    return new grpc.ServerInterceptingCall(call, {
      start(next) {
        next({
          onReceiveMetadata(metadata, nextMetadata) {
            raisable.set(metadata, handle);
            nextMetadata(metadata);
          },
        });
      },
    });
  };
}

/** The receive-limit handle of a call that `receiveLimitInterceptor` made raisable, by its metadata. */
export function receiveLimitOf(metadata: grpc.Metadata): ReceiveLimitHandle | undefined {
  return raisable.get(metadata);
}
