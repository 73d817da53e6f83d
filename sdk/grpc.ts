import * as grpc from '@grpc/grpc-js';
import { MAX_MESSAGE_BYTES, gateClientConstructor, type GateClient } from '@model-gateway/protocol';

/** A `com.platform.gate.Gate` client stub, typed by the types generated from gate.proto. */
export type GateStub = GateClient;

/**
 * The HTTP/2 receive window of SDK channels (each stream's and the connection's). With HTTP/2's
 * default of 64 KiB a 4 MiB message from the gateway crosses in 64 round trips of window updates: a
 * grpc-js receiver spent 9.4 ms of CPU and 18.6 ms of wall time on it with the sender on another
 * core, 5.5 and 7.0 ms with 1 MiB (6.9 → 5.8 ms of CPU on one shared core; `npm run bench:window`).
 * Every request after it on a service's one stream waits for that transfer. Larger windows bought
 * nothing more, and the window is what the gateway may have in flight to one stream unread.
 */
export const RECEIVE_WINDOW_BYTES = 1024 * 1024;

/** Channel options every SDK channel gets: messages up to MAX_MESSAGE_BYTES both ways, a 1 MiB receive window. */
export const BASE_CHANNEL_OPTIONS: grpc.ChannelOptions = {
  'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
  'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
  'grpc-node.flow_control_window': RECEIVE_WINDOW_BYTES,
};

/** A Gate stub for `address` (`host:port`); insecure (loopback, in-cluster) unless credentials are given. */
export function createGateStub(
  address: string,
  credentials: grpc.ChannelCredentials = grpc.credentials.createInsecure(),
  channelOptions: grpc.ChannelOptions = {},
): GateStub {
  const Ctor = gateClientConstructor();
  return new Ctor(address, credentials, { ...BASE_CHANNEL_OPTIONS, ...channelOptions });
}
