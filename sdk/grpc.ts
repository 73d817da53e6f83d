import * as grpc from '@grpc/grpc-js';
import { MAX_MESSAGE_BYTES, gateClientConstructor } from '../core/gate/proto.js';
import type {
  ClientAsrRequestProto,
  ClientAsrResponseProto,
  ClientRequestProto,
  ClientResponseProto,
  ClientTtsRequestProto,
  ClientTtsResponseProto,
  GateToServiceProto,
  HeartBeatProto,
  ServiceToGateProto,
} from '../core/gate/messages.js';

type UnaryCallback<T> = (err: grpc.ServiceError | null, response?: T) => void;

/** The methods of a `com.platform.gate.Gate` client stub that the SDK uses, typed with the hand-written shapes. */
export interface GateStub extends grpc.Client {
  healthCheck(
    request: HeartBeatProto,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: UnaryCallback<HeartBeatProto>,
  ): grpc.ClientUnaryCall;
  processAsync(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<ServiceToGateProto, GateToServiceProto>;
  process(
    request: ClientRequestProto,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: UnaryCallback<ClientResponseProto>,
  ): grpc.ClientUnaryCall;
  processResponseStream(
    request: ClientRequestProto,
    metadata: grpc.Metadata,
    options?: grpc.CallOptions,
  ): grpc.ClientReadableStream<ClientResponseProto>;
  processStream(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<ClientRequestProto, ClientResponseProto>;
  processSynthesis(
    request: ClientTtsRequestProto,
    metadata: grpc.Metadata,
    options?: grpc.CallOptions,
  ): grpc.ClientReadableStream<ClientTtsResponseProto>;
  processRecognition(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<ClientAsrRequestProto, ClientAsrResponseProto>;
}

/** Channel options every SDK channel gets: messages up to MAX_MESSAGE_BYTES both ways. */
export const BASE_CHANNEL_OPTIONS: grpc.ChannelOptions = {
  'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
  'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
};

/** A Gate stub for `address` (`host:port`); insecure (loopback, in-cluster) unless credentials are given. */
export function createGateStub(
  address: string,
  credentials: grpc.ChannelCredentials = grpc.credentials.createInsecure(),
  channelOptions: grpc.ChannelOptions = {},
): GateStub {
  const Ctor = gateClientConstructor();
  return new Ctor(address, credentials, { ...BASE_CHANNEL_OPTIONS, ...channelOptions }) as unknown as GateStub;
}
