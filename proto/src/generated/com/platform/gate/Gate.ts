// Original file: gate.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { ClientAsrRequestProto as _com_platform_gate_ClientAsrRequestProto, ClientAsrRequestProto__Output as _com_platform_gate_ClientAsrRequestProto__Output } from '../../../com/platform/gate/ClientAsrRequestProto.js';
import type { ClientAsrResponseProto as _com_platform_gate_ClientAsrResponseProto, ClientAsrResponseProto__Output as _com_platform_gate_ClientAsrResponseProto__Output } from '../../../com/platform/gate/ClientAsrResponseProto.js';
import type { ClientRequestProto as _com_platform_gate_ClientRequestProto, ClientRequestProto__Output as _com_platform_gate_ClientRequestProto__Output } from '../../../com/platform/gate/ClientRequestProto.js';
import type { ClientResponseProto as _com_platform_gate_ClientResponseProto, ClientResponseProto__Output as _com_platform_gate_ClientResponseProto__Output } from '../../../com/platform/gate/ClientResponseProto.js';
import type { ClientTtsRequestProto as _com_platform_gate_ClientTtsRequestProto, ClientTtsRequestProto__Output as _com_platform_gate_ClientTtsRequestProto__Output } from '../../../com/platform/gate/ClientTtsRequestProto.js';
import type { ClientTtsResponseProto as _com_platform_gate_ClientTtsResponseProto, ClientTtsResponseProto__Output as _com_platform_gate_ClientTtsResponseProto__Output } from '../../../com/platform/gate/ClientTtsResponseProto.js';
import type { GateToServiceProto as _com_platform_gate_GateToServiceProto, GateToServiceProto__Output as _com_platform_gate_GateToServiceProto__Output } from '../../../com/platform/gate/GateToServiceProto.js';
import type { HeartBeatProto as _com_platform_gate_HeartBeatProto, HeartBeatProto__Output as _com_platform_gate_HeartBeatProto__Output } from '../../../com/platform/gate/HeartBeatProto.js';
import type { ServiceToGateProto as _com_platform_gate_ServiceToGateProto, ServiceToGateProto__Output as _com_platform_gate_ServiceToGateProto__Output } from '../../../com/platform/gate/ServiceToGateProto.js';

export interface GateClient extends grpc.Client {
  healthCheck(argument: _com_platform_gate_HeartBeatProto, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_com_platform_gate_HeartBeatProto__Output>): grpc.ClientUnaryCall;
  healthCheck(argument: _com_platform_gate_HeartBeatProto, metadata: grpc.Metadata, callback: grpc.requestCallback<_com_platform_gate_HeartBeatProto__Output>): grpc.ClientUnaryCall;
  healthCheck(argument: _com_platform_gate_HeartBeatProto, options: grpc.CallOptions, callback: grpc.requestCallback<_com_platform_gate_HeartBeatProto__Output>): grpc.ClientUnaryCall;
  healthCheck(argument: _com_platform_gate_HeartBeatProto, callback: grpc.requestCallback<_com_platform_gate_HeartBeatProto__Output>): grpc.ClientUnaryCall;
  
  process(argument: _com_platform_gate_ClientRequestProto, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_com_platform_gate_ClientResponseProto__Output>): grpc.ClientUnaryCall;
  process(argument: _com_platform_gate_ClientRequestProto, metadata: grpc.Metadata, callback: grpc.requestCallback<_com_platform_gate_ClientResponseProto__Output>): grpc.ClientUnaryCall;
  process(argument: _com_platform_gate_ClientRequestProto, options: grpc.CallOptions, callback: grpc.requestCallback<_com_platform_gate_ClientResponseProto__Output>): grpc.ClientUnaryCall;
  process(argument: _com_platform_gate_ClientRequestProto, callback: grpc.requestCallback<_com_platform_gate_ClientResponseProto__Output>): grpc.ClientUnaryCall;
  
  processAsync(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_com_platform_gate_ServiceToGateProto, _com_platform_gate_GateToServiceProto__Output>;
  processAsync(options?: grpc.CallOptions): grpc.ClientDuplexStream<_com_platform_gate_ServiceToGateProto, _com_platform_gate_GateToServiceProto__Output>;
  
  processRecognition(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_com_platform_gate_ClientAsrRequestProto, _com_platform_gate_ClientAsrResponseProto__Output>;
  processRecognition(options?: grpc.CallOptions): grpc.ClientDuplexStream<_com_platform_gate_ClientAsrRequestProto, _com_platform_gate_ClientAsrResponseProto__Output>;
  
  processResponseStream(argument: _com_platform_gate_ClientRequestProto, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_com_platform_gate_ClientResponseProto__Output>;
  processResponseStream(argument: _com_platform_gate_ClientRequestProto, options?: grpc.CallOptions): grpc.ClientReadableStream<_com_platform_gate_ClientResponseProto__Output>;
  
  processStream(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_com_platform_gate_ClientRequestProto, _com_platform_gate_ClientResponseProto__Output>;
  processStream(options?: grpc.CallOptions): grpc.ClientDuplexStream<_com_platform_gate_ClientRequestProto, _com_platform_gate_ClientResponseProto__Output>;
  
  processSynthesis(argument: _com_platform_gate_ClientTtsRequestProto, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_com_platform_gate_ClientTtsResponseProto__Output>;
  processSynthesis(argument: _com_platform_gate_ClientTtsRequestProto, options?: grpc.CallOptions): grpc.ClientReadableStream<_com_platform_gate_ClientTtsResponseProto__Output>;
  
}

export interface GateHandlers extends grpc.UntypedServiceImplementation {
  healthCheck: grpc.handleUnaryCall<_com_platform_gate_HeartBeatProto__Output, _com_platform_gate_HeartBeatProto>;
  
  process: grpc.handleUnaryCall<_com_platform_gate_ClientRequestProto__Output, _com_platform_gate_ClientResponseProto>;
  
  processAsync: grpc.handleBidiStreamingCall<_com_platform_gate_ServiceToGateProto__Output, _com_platform_gate_GateToServiceProto>;
  
  processRecognition: grpc.handleBidiStreamingCall<_com_platform_gate_ClientAsrRequestProto__Output, _com_platform_gate_ClientAsrResponseProto>;
  
  processResponseStream: grpc.handleServerStreamingCall<_com_platform_gate_ClientRequestProto__Output, _com_platform_gate_ClientResponseProto>;
  
  processStream: grpc.handleBidiStreamingCall<_com_platform_gate_ClientRequestProto__Output, _com_platform_gate_ClientResponseProto>;
  
  processSynthesis: grpc.handleServerStreamingCall<_com_platform_gate_ClientTtsRequestProto__Output, _com_platform_gate_ClientTtsResponseProto>;
  
}

export interface GateDefinition extends grpc.ServiceDefinition {
  healthCheck: MethodDefinition<_com_platform_gate_HeartBeatProto, _com_platform_gate_HeartBeatProto, _com_platform_gate_HeartBeatProto__Output, _com_platform_gate_HeartBeatProto__Output>
  process: MethodDefinition<_com_platform_gate_ClientRequestProto, _com_platform_gate_ClientResponseProto, _com_platform_gate_ClientRequestProto__Output, _com_platform_gate_ClientResponseProto__Output>
  processAsync: MethodDefinition<_com_platform_gate_ServiceToGateProto, _com_platform_gate_GateToServiceProto, _com_platform_gate_ServiceToGateProto__Output, _com_platform_gate_GateToServiceProto__Output>
  processRecognition: MethodDefinition<_com_platform_gate_ClientAsrRequestProto, _com_platform_gate_ClientAsrResponseProto, _com_platform_gate_ClientAsrRequestProto__Output, _com_platform_gate_ClientAsrResponseProto__Output>
  processResponseStream: MethodDefinition<_com_platform_gate_ClientRequestProto, _com_platform_gate_ClientResponseProto, _com_platform_gate_ClientRequestProto__Output, _com_platform_gate_ClientResponseProto__Output>
  processStream: MethodDefinition<_com_platform_gate_ClientRequestProto, _com_platform_gate_ClientResponseProto, _com_platform_gate_ClientRequestProto__Output, _com_platform_gate_ClientResponseProto__Output>
  processSynthesis: MethodDefinition<_com_platform_gate_ClientTtsRequestProto, _com_platform_gate_ClientTtsResponseProto, _com_platform_gate_ClientTtsRequestProto__Output, _com_platform_gate_ClientTtsResponseProto__Output>
}
