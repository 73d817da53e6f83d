// Original file: gate.proto

import type { HeartBeatProto as _com_platform_gate_HeartBeatProto, HeartBeatProto__Output as _com_platform_gate_HeartBeatProto__Output } from '../../../com/platform/gate/HeartBeatProto.js';
import type { ClusterUpdateProto as _com_platform_gate_ClusterUpdateProto, ClusterUpdateProto__Output as _com_platform_gate_ClusterUpdateProto__Output } from '../../../com/platform/gate/ClusterUpdateProto.js';
import type { ServiceInfoProto as _com_platform_gate_ServiceInfoProto, ServiceInfoProto__Output as _com_platform_gate_ServiceInfoProto__Output } from '../../../com/platform/gate/ServiceInfoProto.js';
import type { StopServingProto as _com_platform_gate_StopServingProto, StopServingProto__Output as _com_platform_gate_StopServingProto__Output } from '../../../com/platform/gate/StopServingProto.js';
import type { PredictRequestProto as _com_platform_gate_PredictRequestProto, PredictRequestProto__Output as _com_platform_gate_PredictRequestProto__Output } from '../../../com/platform/gate/PredictRequestProto.js';
import type { FitRequestProto as _com_platform_gate_FitRequestProto, FitRequestProto__Output as _com_platform_gate_FitRequestProto__Output } from '../../../com/platform/gate/FitRequestProto.js';
import type { ExtendedRequestProto as _com_platform_gate_ExtendedRequestProto, ExtendedRequestProto__Output as _com_platform_gate_ExtendedRequestProto__Output } from '../../../com/platform/gate/ExtendedRequestProto.js';
import type { StatusRequestProto as _com_platform_gate_StatusRequestProto, StatusRequestProto__Output as _com_platform_gate_StatusRequestProto__Output } from '../../../com/platform/gate/StatusRequestProto.js';
import type { BatchRequestProto as _com_platform_gate_BatchRequestProto, BatchRequestProto__Output as _com_platform_gate_BatchRequestProto__Output } from '../../../com/platform/gate/BatchRequestProto.js';
import type { PartialPredictRequestProto as _com_platform_gate_PartialPredictRequestProto, PartialPredictRequestProto__Output as _com_platform_gate_PartialPredictRequestProto__Output } from '../../../com/platform/gate/PartialPredictRequestProto.js';
import type { CancelRequestProto as _com_platform_gate_CancelRequestProto, CancelRequestProto__Output as _com_platform_gate_CancelRequestProto__Output } from '../../../com/platform/gate/CancelRequestProto.js';
import type { ApiErrorProto as _com_platform_gate_ApiErrorProto, ApiErrorProto__Output as _com_platform_gate_ApiErrorProto__Output } from '../../../com/platform/gate/ApiErrorProto.js';
import type { Long } from '@grpc/proto-loader';

export interface GateToServiceProto {
  'requestId'?: (number | string | Long);
  'heartBeat'?: (_com_platform_gate_HeartBeatProto | null);
  'cluster'?: (_com_platform_gate_ClusterUpdateProto | null);
  'serviceInfo'?: (_com_platform_gate_ServiceInfoProto | null);
  'stopServing'?: (_com_platform_gate_StopServingProto | null);
  'predict'?: (_com_platform_gate_PredictRequestProto | null);
  'fit'?: (_com_platform_gate_FitRequestProto | null);
  'ext'?: (_com_platform_gate_ExtendedRequestProto | null);
  'status'?: (_com_platform_gate_StatusRequestProto | null);
  'batch'?: (_com_platform_gate_BatchRequestProto | null);
  'partialPredict'?: (_com_platform_gate_PartialPredictRequestProto | null);
  'cancel'?: (_com_platform_gate_CancelRequestProto | null);
  'error'?: (_com_platform_gate_ApiErrorProto | null);
  'headers'?: ({[key: string]: string});
  'body'?: "heartBeat"|"cluster"|"serviceInfo"|"stopServing"|"predict"|"fit"|"ext"|"status"|"batch"|"partialPredict"|"cancel"|"error";
}

export interface GateToServiceProto__Output {
  'requestId'?: (number);
  'heartBeat'?: (_com_platform_gate_HeartBeatProto__Output);
  'cluster'?: (_com_platform_gate_ClusterUpdateProto__Output);
  'serviceInfo'?: (_com_platform_gate_ServiceInfoProto__Output);
  'stopServing'?: (_com_platform_gate_StopServingProto__Output);
  'predict'?: (_com_platform_gate_PredictRequestProto__Output);
  'fit'?: (_com_platform_gate_FitRequestProto__Output);
  'ext'?: (_com_platform_gate_ExtendedRequestProto__Output);
  'status'?: (_com_platform_gate_StatusRequestProto__Output);
  'batch'?: (_com_platform_gate_BatchRequestProto__Output);
  'partialPredict'?: (_com_platform_gate_PartialPredictRequestProto__Output);
  'cancel'?: (_com_platform_gate_CancelRequestProto__Output);
  'error'?: (_com_platform_gate_ApiErrorProto__Output);
  'headers': ({[key: string]: string});
  'body'?: "heartBeat"|"cluster"|"serviceInfo"|"stopServing"|"predict"|"fit"|"ext"|"status"|"batch"|"partialPredict"|"cancel"|"error";
}
