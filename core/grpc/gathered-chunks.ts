import type * as grpc from '@grpc/grpc-js';
import { releaseGatheredChunks } from '../../proto/src/index.js';
import { callInternals } from './grpc-call-internals.js';

/** Whether the last call's decoder could be wrapped (releaseGatheredChunks); exposed for the test. */
export let chunksReleased = true;

/**
 * The interceptor: every call's decoder lets go of a message's chunks once the message is out
 * (the protocol package's releaseGatheredChunks says why).
 */
export function releaseGatheredChunksInterceptor(): grpc.ServerInterceptor {
  return (_method, call) => {
    const decoder = callInternals(call).decoder;
    chunksReleased = decoder !== undefined && releaseGatheredChunks(decoder);
    // grpc-js types an interceptor's result as its class; the base call it passes is used as is.
    return call as grpc.ServerInterceptingCall;
  };
}
