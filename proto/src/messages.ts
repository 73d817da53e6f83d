/**
 * The Gate messages as the gateway and the SDK handle them, derived from the types that
 * proto-loader-gen-types generates from gate.proto (`npm run gen:proto`; never edited by hand).
 * Each is the decoder's output shape (keepCase, longs as Number, enums as names, oneofs named by
 * `body`) with every field optional: the decoder fills maps and lists, but a message being built
 * may leave any field out, and the encoder accepts that.
 */
import type { ApiErrorProto__Output } from './generated/com/platform/gate/ApiErrorProto.js';
import type { AsrRequestProto__Output } from './generated/com/platform/gate/AsrRequestProto.js';
import type { AsrResponseProto__Output } from './generated/com/platform/gate/AsrResponseProto.js';
import type { AudioChunk__Output } from './generated/com/platform/gate/AudioChunk.js';
import type { AudioFormatOptions__Output } from './generated/com/platform/gate/AudioFormatOptions.js';
import type { BatchPayloadProto__Output } from './generated/com/platform/gate/BatchPayloadProto.js';
import type { BatchPayloadResponseProto__Output } from './generated/com/platform/gate/BatchPayloadResponseProto.js';
import type { BatchRequestProto__Output } from './generated/com/platform/gate/BatchRequestProto.js';
import type { BatchResponseProto__Output } from './generated/com/platform/gate/BatchResponseProto.js';
import type { CancelRequestProto__Output } from './generated/com/platform/gate/CancelRequestProto.js';
import type { ClientAsrRequestProto__Output } from './generated/com/platform/gate/ClientAsrRequestProto.js';
import type { ClientAsrResponseProto__Output } from './generated/com/platform/gate/ClientAsrResponseProto.js';
import type { ClientRequestProto__Output } from './generated/com/platform/gate/ClientRequestProto.js';
import type { ClientResponseProto__Output } from './generated/com/platform/gate/ClientResponseProto.js';
import type { ClientTtsRequestProto__Output } from './generated/com/platform/gate/ClientTtsRequestProto.js';
import type { ClientTtsResponseProto__Output } from './generated/com/platform/gate/ClientTtsResponseProto.js';
import type { ClusterUpdateProto__Output } from './generated/com/platform/gate/ClusterUpdateProto.js';
import type { DatasetInfoProto__Output } from './generated/com/platform/gate/DatasetInfoProto.js';
import type { DeferredBillingChargeProto__Output } from './generated/com/platform/gate/DeferredBillingChargeProto.js';
import type { DeferredBillingChargeRequestProto__Output } from './generated/com/platform/gate/DeferredBillingChargeRequestProto.js';
import type { DeferredBillingChargesProto__Output } from './generated/com/platform/gate/DeferredBillingChargesProto.js';
import type { DeferredBillingParamsProto__Output } from './generated/com/platform/gate/DeferredBillingParamsProto.js';
import type { ExtendedRequestProto__Output } from './generated/com/platform/gate/ExtendedRequestProto.js';
import type { ExtendedResponseProto__Output } from './generated/com/platform/gate/ExtendedResponseProto.js';
import type { FitRequestProto__Output } from './generated/com/platform/gate/FitRequestProto.js';
import type { FitResponseProto__Output } from './generated/com/platform/gate/FitResponseProto.js';
import type { FitStatusProto__Output } from './generated/com/platform/gate/FitStatusProto.js';
import type { GateToServiceProto__Output } from './generated/com/platform/gate/GateToServiceProto.js';
import type { HeartBeatProto__Output } from './generated/com/platform/gate/HeartBeatProto.js';
import type { MethodDescriptorProto__Output } from './generated/com/platform/gate/MethodDescriptorProto.js';
import type { ParamDescriptorProto__Output } from './generated/com/platform/gate/ParamDescriptorProto.js';
import type { PartialPredictRequestProto__Output } from './generated/com/platform/gate/PartialPredictRequestProto.js';
import type { PartialPredictResponseProto__Output } from './generated/com/platform/gate/PartialPredictResponseProto.js';
import type { PayloadProto__Output } from './generated/com/platform/gate/PayloadProto.js';
import type { PredictRequestProto__Output } from './generated/com/platform/gate/PredictRequestProto.js';
import type { PredictResponseProto__Output } from './generated/com/platform/gate/PredictResponseProto.js';
import type { RecognitionConfig__Output } from './generated/com/platform/gate/RecognitionConfig.js';
import type { ServiceDescriptorProto__Output } from './generated/com/platform/gate/ServiceDescriptorProto.js';
import type { ServiceInfoProto__Output } from './generated/com/platform/gate/ServiceInfoProto.js';
import type { ServiceToGateProto__Output } from './generated/com/platform/gate/ServiceToGateProto.js';
import type { SpeechRecognitionAlternative__Output } from './generated/com/platform/gate/SpeechRecognitionAlternative.js';
import type { SpeechRecognitionChunk__Output } from './generated/com/platform/gate/SpeechRecognitionChunk.js';
import type { StartServingProto__Output } from './generated/com/platform/gate/StartServingProto.js';
import type { StatusRequestProto__Output } from './generated/com/platform/gate/StatusRequestProto.js';
import type { StatusResponseProto__Output } from './generated/com/platform/gate/StatusResponseProto.js';
import type { StopServingProto__Output } from './generated/com/platform/gate/StopServingProto.js';
import type { TtsRequestProto__Output } from './generated/com/platform/gate/TtsRequestProto.js';
import type { TtsResponseProto__Output } from './generated/com/platform/gate/TtsResponseProto.js';
import type { WordInfo__Output } from './generated/com/platform/gate/WordInfo.js';
import type { Duration__Output } from './generated/google/protobuf/Duration.js';
import type { SimpleStatusProto__Output } from './generated/com/platform/gate/SimpleStatusProto.js';
import type { _com_platform_gate_RecognitionConfig_AudioEncoding__Output } from './generated/com/platform/gate/RecognitionConfig.js';

/**
 * A decoded message with every field optional, recursively; bytes stay Buffers and maps keep their
 * string keys (a map is never partial: a key present has a value).
 */
export type Wire<T> = T extends Buffer
  ? T
  : T extends readonly (infer U)[]
    ? Wire<U>[]
    : T extends object
      ? string extends keyof T
        ? { [key: string]: Wire<T[string & keyof T]> }
        : { [K in keyof T]?: Wire<T[K]> }
      : T;

export type StringMap = Record<string, string>;
export type DurationProto = Wire<Duration__Output>;
/** `SimpleStatusProto` names; enums are decoded as names (enums: String). */
export type SimpleStatusName = SimpleStatusProto__Output;
export type RecognitionAudioEncoding = _com_platform_gate_RecognitionConfig_AudioEncoding__Output;

export type ApiErrorProto = Wire<ApiErrorProto__Output>;
export type AsrRequestProto = Wire<AsrRequestProto__Output>;
export type AsrResponseProto = Wire<AsrResponseProto__Output>;
export type AudioChunk = Wire<AudioChunk__Output>;
export type AudioFormatOptions = Wire<AudioFormatOptions__Output>;
export type BatchPayloadProto = Wire<BatchPayloadProto__Output>;
export type BatchPayloadResponseProto = Wire<BatchPayloadResponseProto__Output>;
export type BatchRequestProto = Wire<BatchRequestProto__Output>;
export type BatchResponseProto = Wire<BatchResponseProto__Output>;
export type CancelRequestProto = Wire<CancelRequestProto__Output>;
export type ClientAsrRequestProto = Wire<ClientAsrRequestProto__Output>;
export type ClientAsrResponseProto = Wire<ClientAsrResponseProto__Output>;
export type ClientRequestProto = Wire<ClientRequestProto__Output>;
export type ClientResponseProto = Wire<ClientResponseProto__Output>;
export type ClientTtsRequestProto = Wire<ClientTtsRequestProto__Output>;
export type ClientTtsResponseProto = Wire<ClientTtsResponseProto__Output>;
export type ClusterUpdateProto = Wire<ClusterUpdateProto__Output>;
export type DatasetInfoProto = Wire<DatasetInfoProto__Output>;
export type DeferredBillingChargeProto = Wire<DeferredBillingChargeProto__Output>;
export type DeferredBillingChargeRequestProto = Wire<DeferredBillingChargeRequestProto__Output>;
export type DeferredBillingChargesProto = Wire<DeferredBillingChargesProto__Output>;
export type DeferredBillingParamsProto = Wire<DeferredBillingParamsProto__Output>;
export type ExtendedRequestProto = Wire<ExtendedRequestProto__Output>;
export type ExtendedResponseProto = Wire<ExtendedResponseProto__Output>;
export type FitRequestProto = Wire<FitRequestProto__Output>;
export type FitResponseProto = Wire<FitResponseProto__Output>;
export type FitStatusProto = Wire<FitStatusProto__Output>;
export type GateToServiceProto = Wire<GateToServiceProto__Output>;
export type HeartBeatProto = Wire<HeartBeatProto__Output>;
export type MethodDescriptorProto = Wire<MethodDescriptorProto__Output>;
export type ParamDescriptorProto = Wire<ParamDescriptorProto__Output>;
export type PartialPredictRequestProto = Wire<PartialPredictRequestProto__Output>;
export type PartialPredictResponseProto = Wire<PartialPredictResponseProto__Output>;
export type PayloadProto = Wire<PayloadProto__Output>;
export type PredictRequestProto = Wire<PredictRequestProto__Output>;
export type PredictResponseProto = Wire<PredictResponseProto__Output>;
export type RecognitionConfig = Wire<RecognitionConfig__Output>;
export type ServiceDescriptorProto = Wire<ServiceDescriptorProto__Output>;
export type ServiceInfoProto = Wire<ServiceInfoProto__Output>;
export type ServiceToGateProto = Wire<ServiceToGateProto__Output>;
export type SpeechRecognitionAlternative = Wire<SpeechRecognitionAlternative__Output>;
export type SpeechRecognitionChunk = Wire<SpeechRecognitionChunk__Output>;
export type StartServingProto = Wire<StartServingProto__Output>;
export type StatusRequestProto = Wire<StatusRequestProto__Output>;
export type StatusResponseProto = Wire<StatusResponseProto__Output>;
export type StopServingProto = Wire<StopServingProto__Output>;
export type TtsRequestProto = Wire<TtsRequestProto__Output>;
export type TtsResponseProto = Wire<TtsResponseProto__Output>;
export type WordInfo = Wire<WordInfo__Output>;

/** Members of the `body` oneof of ServiceToGateProto, by name. */
export type ServiceToGateBodies = OneofMembers<ServiceToGateProto>;
/** Members of the `body` oneof of GateToServiceProto, by name. */
export type GateToServiceBodies = OneofMembers<GateToServiceProto>;

type OneofMembers<M extends { body?: string }> = { [K in NonNullable<M['body']> & keyof M]-?: NonNullable<M[K]> };
