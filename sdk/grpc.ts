import * as grpc from '@grpc/grpc-js';
import { StreamDecoder } from '@grpc/grpc-js/build/src/stream-decoder.js';
import {
  MAX_MESSAGE_BYTES,
  RECEIVE_WINDOW_BYTES,
  gateClientConstructor,
  releaseGatheredChunksOfClass,
  type GateClient,
} from '@model-gateway/protocol';

/** A `com.platform.gate.Gate` client stub, typed by the types generated from gate.proto. */
export type GateStub = GateClient;

/** Channel options every SDK channel gets: messages up to MAX_MESSAGE_BYTES both ways, a 1 MiB receive window. */
export const BASE_CHANNEL_OPTIONS: grpc.ChannelOptions = {
  'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
  'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
  'grpc-node.flow_control_window': RECEIVE_WINDOW_BYTES,
};

/** Whether grpc-js's decoders were wrapped when the last stub was made; exposed for the test. */
export let decodersReleaseChunks = false;

/** A Gate stub for `address` (`host:port`); insecure (loopback, in-cluster) unless credentials are given. */
export function createGateStub(
  address: string,
  credentials: grpc.ChannelCredentials = grpc.credentials.createInsecure(),
  channelOptions: grpc.ChannelOptions = {},
): GateStub {
  // The decoders of this grpc-js let go of each message's chunks once it is out: on a long-lived
  // stream they were kept until a mark-compact (the protocol's releaseGatheredChunks says why).
  decodersReleaseChunks = releaseGatheredChunksOfClass(StreamDecoder);
  const Ctor = gateClientConstructor();
  return new Ctor(address, credentials, { ...BASE_CHANNEL_OPTIONS, ...channelOptions });
}
