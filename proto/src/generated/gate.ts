import type * as grpc from '@grpc/grpc-js';
import type { EnumTypeDefinition, MessageTypeDefinition } from '@grpc/proto-loader';

import type { ApiErrorProto as _com_platform_gate_ApiErrorProto, ApiErrorProto__Output as _com_platform_gate_ApiErrorProto__Output } from './com/platform/gate/ApiErrorProto.js';
import type { AsrRequestProto as _com_platform_gate_AsrRequestProto, AsrRequestProto__Output as _com_platform_gate_AsrRequestProto__Output } from './com/platform/gate/AsrRequestProto.js';
import type { AsrResponseProto as _com_platform_gate_AsrResponseProto, AsrResponseProto__Output as _com_platform_gate_AsrResponseProto__Output } from './com/platform/gate/AsrResponseProto.js';
import type { AudioChunk as _com_platform_gate_AudioChunk, AudioChunk__Output as _com_platform_gate_AudioChunk__Output } from './com/platform/gate/AudioChunk.js';
import type { AudioFormatOptions as _com_platform_gate_AudioFormatOptions, AudioFormatOptions__Output as _com_platform_gate_AudioFormatOptions__Output } from './com/platform/gate/AudioFormatOptions.js';
import type { BatchPayloadProto as _com_platform_gate_BatchPayloadProto, BatchPayloadProto__Output as _com_platform_gate_BatchPayloadProto__Output } from './com/platform/gate/BatchPayloadProto.js';
import type { BatchPayloadResponseProto as _com_platform_gate_BatchPayloadResponseProto, BatchPayloadResponseProto__Output as _com_platform_gate_BatchPayloadResponseProto__Output } from './com/platform/gate/BatchPayloadResponseProto.js';
import type { BatchRequestProto as _com_platform_gate_BatchRequestProto, BatchRequestProto__Output as _com_platform_gate_BatchRequestProto__Output } from './com/platform/gate/BatchRequestProto.js';
import type { BatchResponseProto as _com_platform_gate_BatchResponseProto, BatchResponseProto__Output as _com_platform_gate_BatchResponseProto__Output } from './com/platform/gate/BatchResponseProto.js';
import type { CancelRequestProto as _com_platform_gate_CancelRequestProto, CancelRequestProto__Output as _com_platform_gate_CancelRequestProto__Output } from './com/platform/gate/CancelRequestProto.js';
import type { ClientAsrRequestProto as _com_platform_gate_ClientAsrRequestProto, ClientAsrRequestProto__Output as _com_platform_gate_ClientAsrRequestProto__Output } from './com/platform/gate/ClientAsrRequestProto.js';
import type { ClientAsrResponseProto as _com_platform_gate_ClientAsrResponseProto, ClientAsrResponseProto__Output as _com_platform_gate_ClientAsrResponseProto__Output } from './com/platform/gate/ClientAsrResponseProto.js';
import type { ClientRequestProto as _com_platform_gate_ClientRequestProto, ClientRequestProto__Output as _com_platform_gate_ClientRequestProto__Output } from './com/platform/gate/ClientRequestProto.js';
import type { ClientResponseProto as _com_platform_gate_ClientResponseProto, ClientResponseProto__Output as _com_platform_gate_ClientResponseProto__Output } from './com/platform/gate/ClientResponseProto.js';
import type { ClientTokenRequestProto as _com_platform_gate_ClientTokenRequestProto, ClientTokenRequestProto__Output as _com_platform_gate_ClientTokenRequestProto__Output } from './com/platform/gate/ClientTokenRequestProto.js';
import type { ClientTokenResponseProto as _com_platform_gate_ClientTokenResponseProto, ClientTokenResponseProto__Output as _com_platform_gate_ClientTokenResponseProto__Output } from './com/platform/gate/ClientTokenResponseProto.js';
import type { ClientTtsRequestProto as _com_platform_gate_ClientTtsRequestProto, ClientTtsRequestProto__Output as _com_platform_gate_ClientTtsRequestProto__Output } from './com/platform/gate/ClientTtsRequestProto.js';
import type { ClientTtsResponseProto as _com_platform_gate_ClientTtsResponseProto, ClientTtsResponseProto__Output as _com_platform_gate_ClientTtsResponseProto__Output } from './com/platform/gate/ClientTtsResponseProto.js';
import type { ClusterUpdateProto as _com_platform_gate_ClusterUpdateProto, ClusterUpdateProto__Output as _com_platform_gate_ClusterUpdateProto__Output } from './com/platform/gate/ClusterUpdateProto.js';
import type { DatasetInfoProto as _com_platform_gate_DatasetInfoProto, DatasetInfoProto__Output as _com_platform_gate_DatasetInfoProto__Output } from './com/platform/gate/DatasetInfoProto.js';
import type { DeferredBillingChargeProto as _com_platform_gate_DeferredBillingChargeProto, DeferredBillingChargeProto__Output as _com_platform_gate_DeferredBillingChargeProto__Output } from './com/platform/gate/DeferredBillingChargeProto.js';
import type { DeferredBillingChargeRequestProto as _com_platform_gate_DeferredBillingChargeRequestProto, DeferredBillingChargeRequestProto__Output as _com_platform_gate_DeferredBillingChargeRequestProto__Output } from './com/platform/gate/DeferredBillingChargeRequestProto.js';
import type { DeferredBillingChargesProto as _com_platform_gate_DeferredBillingChargesProto, DeferredBillingChargesProto__Output as _com_platform_gate_DeferredBillingChargesProto__Output } from './com/platform/gate/DeferredBillingChargesProto.js';
import type { DeferredBillingParamsProto as _com_platform_gate_DeferredBillingParamsProto, DeferredBillingParamsProto__Output as _com_platform_gate_DeferredBillingParamsProto__Output } from './com/platform/gate/DeferredBillingParamsProto.js';
import type { ExtendedRequestProto as _com_platform_gate_ExtendedRequestProto, ExtendedRequestProto__Output as _com_platform_gate_ExtendedRequestProto__Output } from './com/platform/gate/ExtendedRequestProto.js';
import type { ExtendedResponseProto as _com_platform_gate_ExtendedResponseProto, ExtendedResponseProto__Output as _com_platform_gate_ExtendedResponseProto__Output } from './com/platform/gate/ExtendedResponseProto.js';
import type { FitRequestProto as _com_platform_gate_FitRequestProto, FitRequestProto__Output as _com_platform_gate_FitRequestProto__Output } from './com/platform/gate/FitRequestProto.js';
import type { FitResponseProto as _com_platform_gate_FitResponseProto, FitResponseProto__Output as _com_platform_gate_FitResponseProto__Output } from './com/platform/gate/FitResponseProto.js';
import type { FitStatusProto as _com_platform_gate_FitStatusProto, FitStatusProto__Output as _com_platform_gate_FitStatusProto__Output } from './com/platform/gate/FitStatusProto.js';
import type { GateClient as _com_platform_gate_GateClient, GateDefinition as _com_platform_gate_GateDefinition } from './com/platform/gate/Gate.js';
import type { GateToServiceProto as _com_platform_gate_GateToServiceProto, GateToServiceProto__Output as _com_platform_gate_GateToServiceProto__Output } from './com/platform/gate/GateToServiceProto.js';
import type { HeartBeatProto as _com_platform_gate_HeartBeatProto, HeartBeatProto__Output as _com_platform_gate_HeartBeatProto__Output } from './com/platform/gate/HeartBeatProto.js';
import type { MethodDescriptorProto as _com_platform_gate_MethodDescriptorProto, MethodDescriptorProto__Output as _com_platform_gate_MethodDescriptorProto__Output } from './com/platform/gate/MethodDescriptorProto.js';
import type { ParamDescriptorProto as _com_platform_gate_ParamDescriptorProto, ParamDescriptorProto__Output as _com_platform_gate_ParamDescriptorProto__Output } from './com/platform/gate/ParamDescriptorProto.js';
import type { PartialPredictRequestProto as _com_platform_gate_PartialPredictRequestProto, PartialPredictRequestProto__Output as _com_platform_gate_PartialPredictRequestProto__Output } from './com/platform/gate/PartialPredictRequestProto.js';
import type { PartialPredictResponseProto as _com_platform_gate_PartialPredictResponseProto, PartialPredictResponseProto__Output as _com_platform_gate_PartialPredictResponseProto__Output } from './com/platform/gate/PartialPredictResponseProto.js';
import type { PayloadProto as _com_platform_gate_PayloadProto, PayloadProto__Output as _com_platform_gate_PayloadProto__Output } from './com/platform/gate/PayloadProto.js';
import type { PredictRequestProto as _com_platform_gate_PredictRequestProto, PredictRequestProto__Output as _com_platform_gate_PredictRequestProto__Output } from './com/platform/gate/PredictRequestProto.js';
import type { PredictResponseProto as _com_platform_gate_PredictResponseProto, PredictResponseProto__Output as _com_platform_gate_PredictResponseProto__Output } from './com/platform/gate/PredictResponseProto.js';
import type { RecognitionConfig as _com_platform_gate_RecognitionConfig, RecognitionConfig__Output as _com_platform_gate_RecognitionConfig__Output } from './com/platform/gate/RecognitionConfig.js';
import type { ServiceDescriptorProto as _com_platform_gate_ServiceDescriptorProto, ServiceDescriptorProto__Output as _com_platform_gate_ServiceDescriptorProto__Output } from './com/platform/gate/ServiceDescriptorProto.js';
import type { ServiceInfoProto as _com_platform_gate_ServiceInfoProto, ServiceInfoProto__Output as _com_platform_gate_ServiceInfoProto__Output } from './com/platform/gate/ServiceInfoProto.js';
import type { ServiceToGateProto as _com_platform_gate_ServiceToGateProto, ServiceToGateProto__Output as _com_platform_gate_ServiceToGateProto__Output } from './com/platform/gate/ServiceToGateProto.js';
import type { SimpleTextProto as _com_platform_gate_SimpleTextProto, SimpleTextProto__Output as _com_platform_gate_SimpleTextProto__Output } from './com/platform/gate/SimpleTextProto.js';
import type { SpeechRecognitionAlternative as _com_platform_gate_SpeechRecognitionAlternative, SpeechRecognitionAlternative__Output as _com_platform_gate_SpeechRecognitionAlternative__Output } from './com/platform/gate/SpeechRecognitionAlternative.js';
import type { SpeechRecognitionChunk as _com_platform_gate_SpeechRecognitionChunk, SpeechRecognitionChunk__Output as _com_platform_gate_SpeechRecognitionChunk__Output } from './com/platform/gate/SpeechRecognitionChunk.js';
import type { StartServingProto as _com_platform_gate_StartServingProto, StartServingProto__Output as _com_platform_gate_StartServingProto__Output } from './com/platform/gate/StartServingProto.js';
import type { StatusRequestProto as _com_platform_gate_StatusRequestProto, StatusRequestProto__Output as _com_platform_gate_StatusRequestProto__Output } from './com/platform/gate/StatusRequestProto.js';
import type { StatusResponseProto as _com_platform_gate_StatusResponseProto, StatusResponseProto__Output as _com_platform_gate_StatusResponseProto__Output } from './com/platform/gate/StatusResponseProto.js';
import type { StopServingProto as _com_platform_gate_StopServingProto, StopServingProto__Output as _com_platform_gate_StopServingProto__Output } from './com/platform/gate/StopServingProto.js';
import type { TtsRequestProto as _com_platform_gate_TtsRequestProto, TtsRequestProto__Output as _com_platform_gate_TtsRequestProto__Output } from './com/platform/gate/TtsRequestProto.js';
import type { TtsResponseProto as _com_platform_gate_TtsResponseProto, TtsResponseProto__Output as _com_platform_gate_TtsResponseProto__Output } from './com/platform/gate/TtsResponseProto.js';
import type { WordInfo as _com_platform_gate_WordInfo, WordInfo__Output as _com_platform_gate_WordInfo__Output } from './com/platform/gate/WordInfo.js';
import type { Duration as _google_protobuf_Duration, Duration__Output as _google_protobuf_Duration__Output } from './google/protobuf/Duration.js';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  com: {
    platform: {
      gate: {
        ApiErrorProto: MessageTypeDefinition<_com_platform_gate_ApiErrorProto, _com_platform_gate_ApiErrorProto__Output>
        AsrRequestProto: MessageTypeDefinition<_com_platform_gate_AsrRequestProto, _com_platform_gate_AsrRequestProto__Output>
        AsrResponseProto: MessageTypeDefinition<_com_platform_gate_AsrResponseProto, _com_platform_gate_AsrResponseProto__Output>
        AudioChunk: MessageTypeDefinition<_com_platform_gate_AudioChunk, _com_platform_gate_AudioChunk__Output>
        AudioFormatOptions: MessageTypeDefinition<_com_platform_gate_AudioFormatOptions, _com_platform_gate_AudioFormatOptions__Output>
        BatchPayloadProto: MessageTypeDefinition<_com_platform_gate_BatchPayloadProto, _com_platform_gate_BatchPayloadProto__Output>
        BatchPayloadResponseProto: MessageTypeDefinition<_com_platform_gate_BatchPayloadResponseProto, _com_platform_gate_BatchPayloadResponseProto__Output>
        BatchRequestProto: MessageTypeDefinition<_com_platform_gate_BatchRequestProto, _com_platform_gate_BatchRequestProto__Output>
        BatchResponseProto: MessageTypeDefinition<_com_platform_gate_BatchResponseProto, _com_platform_gate_BatchResponseProto__Output>
        CancelRequestProto: MessageTypeDefinition<_com_platform_gate_CancelRequestProto, _com_platform_gate_CancelRequestProto__Output>
        ClientAsrRequestProto: MessageTypeDefinition<_com_platform_gate_ClientAsrRequestProto, _com_platform_gate_ClientAsrRequestProto__Output>
        ClientAsrResponseProto: MessageTypeDefinition<_com_platform_gate_ClientAsrResponseProto, _com_platform_gate_ClientAsrResponseProto__Output>
        ClientRequestProto: MessageTypeDefinition<_com_platform_gate_ClientRequestProto, _com_platform_gate_ClientRequestProto__Output>
        ClientResponseProto: MessageTypeDefinition<_com_platform_gate_ClientResponseProto, _com_platform_gate_ClientResponseProto__Output>
        ClientTokenRequestProto: MessageTypeDefinition<_com_platform_gate_ClientTokenRequestProto, _com_platform_gate_ClientTokenRequestProto__Output>
        ClientTokenResponseProto: MessageTypeDefinition<_com_platform_gate_ClientTokenResponseProto, _com_platform_gate_ClientTokenResponseProto__Output>
        ClientTtsRequestProto: MessageTypeDefinition<_com_platform_gate_ClientTtsRequestProto, _com_platform_gate_ClientTtsRequestProto__Output>
        ClientTtsResponseProto: MessageTypeDefinition<_com_platform_gate_ClientTtsResponseProto, _com_platform_gate_ClientTtsResponseProto__Output>
        ClusterUpdateProto: MessageTypeDefinition<_com_platform_gate_ClusterUpdateProto, _com_platform_gate_ClusterUpdateProto__Output>
        DatasetInfoProto: MessageTypeDefinition<_com_platform_gate_DatasetInfoProto, _com_platform_gate_DatasetInfoProto__Output>
        DeferredBillingChargeProto: MessageTypeDefinition<_com_platform_gate_DeferredBillingChargeProto, _com_platform_gate_DeferredBillingChargeProto__Output>
        DeferredBillingChargeRequestProto: MessageTypeDefinition<_com_platform_gate_DeferredBillingChargeRequestProto, _com_platform_gate_DeferredBillingChargeRequestProto__Output>
        DeferredBillingChargesProto: MessageTypeDefinition<_com_platform_gate_DeferredBillingChargesProto, _com_platform_gate_DeferredBillingChargesProto__Output>
        DeferredBillingParamsProto: MessageTypeDefinition<_com_platform_gate_DeferredBillingParamsProto, _com_platform_gate_DeferredBillingParamsProto__Output>
        ExtendedRequestProto: MessageTypeDefinition<_com_platform_gate_ExtendedRequestProto, _com_platform_gate_ExtendedRequestProto__Output>
        ExtendedResponseProto: MessageTypeDefinition<_com_platform_gate_ExtendedResponseProto, _com_platform_gate_ExtendedResponseProto__Output>
        FitRequestProto: MessageTypeDefinition<_com_platform_gate_FitRequestProto, _com_platform_gate_FitRequestProto__Output>
        FitResponseProto: MessageTypeDefinition<_com_platform_gate_FitResponseProto, _com_platform_gate_FitResponseProto__Output>
        FitStatusProto: MessageTypeDefinition<_com_platform_gate_FitStatusProto, _com_platform_gate_FitStatusProto__Output>
        Gate: SubtypeConstructor<typeof grpc.Client, _com_platform_gate_GateClient> & { service: _com_platform_gate_GateDefinition }
        GateToServiceProto: MessageTypeDefinition<_com_platform_gate_GateToServiceProto, _com_platform_gate_GateToServiceProto__Output>
        HeartBeatProto: MessageTypeDefinition<_com_platform_gate_HeartBeatProto, _com_platform_gate_HeartBeatProto__Output>
        MethodDescriptorProto: MessageTypeDefinition<_com_platform_gate_MethodDescriptorProto, _com_platform_gate_MethodDescriptorProto__Output>
        ParamDescriptorProto: MessageTypeDefinition<_com_platform_gate_ParamDescriptorProto, _com_platform_gate_ParamDescriptorProto__Output>
        PartialPredictRequestProto: MessageTypeDefinition<_com_platform_gate_PartialPredictRequestProto, _com_platform_gate_PartialPredictRequestProto__Output>
        PartialPredictResponseProto: MessageTypeDefinition<_com_platform_gate_PartialPredictResponseProto, _com_platform_gate_PartialPredictResponseProto__Output>
        PayloadProto: MessageTypeDefinition<_com_platform_gate_PayloadProto, _com_platform_gate_PayloadProto__Output>
        PredictRequestProto: MessageTypeDefinition<_com_platform_gate_PredictRequestProto, _com_platform_gate_PredictRequestProto__Output>
        PredictResponseProto: MessageTypeDefinition<_com_platform_gate_PredictResponseProto, _com_platform_gate_PredictResponseProto__Output>
        RecognitionConfig: MessageTypeDefinition<_com_platform_gate_RecognitionConfig, _com_platform_gate_RecognitionConfig__Output>
        ServiceDescriptorProto: MessageTypeDefinition<_com_platform_gate_ServiceDescriptorProto, _com_platform_gate_ServiceDescriptorProto__Output>
        ServiceInfoProto: MessageTypeDefinition<_com_platform_gate_ServiceInfoProto, _com_platform_gate_ServiceInfoProto__Output>
        ServiceToGateProto: MessageTypeDefinition<_com_platform_gate_ServiceToGateProto, _com_platform_gate_ServiceToGateProto__Output>
        SimpleStatusProto: EnumTypeDefinition
        SimpleTextProto: MessageTypeDefinition<_com_platform_gate_SimpleTextProto, _com_platform_gate_SimpleTextProto__Output>
        SpeechRecognitionAlternative: MessageTypeDefinition<_com_platform_gate_SpeechRecognitionAlternative, _com_platform_gate_SpeechRecognitionAlternative__Output>
        SpeechRecognitionChunk: MessageTypeDefinition<_com_platform_gate_SpeechRecognitionChunk, _com_platform_gate_SpeechRecognitionChunk__Output>
        StartServingProto: MessageTypeDefinition<_com_platform_gate_StartServingProto, _com_platform_gate_StartServingProto__Output>
        StatusRequestProto: MessageTypeDefinition<_com_platform_gate_StatusRequestProto, _com_platform_gate_StatusRequestProto__Output>
        StatusResponseProto: MessageTypeDefinition<_com_platform_gate_StatusResponseProto, _com_platform_gate_StatusResponseProto__Output>
        StopServingProto: MessageTypeDefinition<_com_platform_gate_StopServingProto, _com_platform_gate_StopServingProto__Output>
        TtsRequestProto: MessageTypeDefinition<_com_platform_gate_TtsRequestProto, _com_platform_gate_TtsRequestProto__Output>
        TtsResponseProto: MessageTypeDefinition<_com_platform_gate_TtsResponseProto, _com_platform_gate_TtsResponseProto__Output>
        WordInfo: MessageTypeDefinition<_com_platform_gate_WordInfo, _com_platform_gate_WordInfo__Output>
      }
    }
  }
  google: {
    protobuf: {
      Duration: MessageTypeDefinition<_google_protobuf_Duration, _google_protobuf_Duration__Output>
    }
  }
}

