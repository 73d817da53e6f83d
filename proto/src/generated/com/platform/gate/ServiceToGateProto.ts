// Original file: gate.proto

import type { HeartBeatProto as _com_platform_gate_HeartBeatProto, HeartBeatProto__Output as _com_platform_gate_HeartBeatProto__Output } from '../../../com/platform/gate/HeartBeatProto.js';
import type { StartServingProto as _com_platform_gate_StartServingProto, StartServingProto__Output as _com_platform_gate_StartServingProto__Output } from '../../../com/platform/gate/StartServingProto.js';
import type { StopServingProto as _com_platform_gate_StopServingProto, StopServingProto__Output as _com_platform_gate_StopServingProto__Output } from '../../../com/platform/gate/StopServingProto.js';
import type { PredictResponseProto as _com_platform_gate_PredictResponseProto, PredictResponseProto__Output as _com_platform_gate_PredictResponseProto__Output } from '../../../com/platform/gate/PredictResponseProto.js';
import type { FitResponseProto as _com_platform_gate_FitResponseProto, FitResponseProto__Output as _com_platform_gate_FitResponseProto__Output } from '../../../com/platform/gate/FitResponseProto.js';
import type { ExtendedResponseProto as _com_platform_gate_ExtendedResponseProto, ExtendedResponseProto__Output as _com_platform_gate_ExtendedResponseProto__Output } from '../../../com/platform/gate/ExtendedResponseProto.js';
import type { StatusResponseProto as _com_platform_gate_StatusResponseProto, StatusResponseProto__Output as _com_platform_gate_StatusResponseProto__Output } from '../../../com/platform/gate/StatusResponseProto.js';
import type { BatchResponseProto as _com_platform_gate_BatchResponseProto, BatchResponseProto__Output as _com_platform_gate_BatchResponseProto__Output } from '../../../com/platform/gate/BatchResponseProto.js';
import type { PartialPredictResponseProto as _com_platform_gate_PartialPredictResponseProto, PartialPredictResponseProto__Output as _com_platform_gate_PartialPredictResponseProto__Output } from '../../../com/platform/gate/PartialPredictResponseProto.js';
import type { FitStatusProto as _com_platform_gate_FitStatusProto, FitStatusProto__Output as _com_platform_gate_FitStatusProto__Output } from '../../../com/platform/gate/FitStatusProto.js';
import type { DeferredBillingChargeRequestProto as _com_platform_gate_DeferredBillingChargeRequestProto, DeferredBillingChargeRequestProto__Output as _com_platform_gate_DeferredBillingChargeRequestProto__Output } from '../../../com/platform/gate/DeferredBillingChargeRequestProto.js';
import type { DeferredBillingChargesProto as _com_platform_gate_DeferredBillingChargesProto, DeferredBillingChargesProto__Output as _com_platform_gate_DeferredBillingChargesProto__Output } from '../../../com/platform/gate/DeferredBillingChargesProto.js';
import type { ApiErrorProto as _com_platform_gate_ApiErrorProto, ApiErrorProto__Output as _com_platform_gate_ApiErrorProto__Output } from '../../../com/platform/gate/ApiErrorProto.js';
import type { Long } from '@grpc/proto-loader';

export interface ServiceToGateProto {
  'requestId'?: (number | string | Long);
  'heartBeat'?: (_com_platform_gate_HeartBeatProto | null);
  'startServing'?: (_com_platform_gate_StartServingProto | null);
  'stopServing'?: (_com_platform_gate_StopServingProto | null);
  'predict'?: (_com_platform_gate_PredictResponseProto | null);
  'fit'?: (_com_platform_gate_FitResponseProto | null);
  'ext'?: (_com_platform_gate_ExtendedResponseProto | null);
  'status'?: (_com_platform_gate_StatusResponseProto | null);
  'batch'?: (_com_platform_gate_BatchResponseProto | null);
  'partialPredict'?: (_com_platform_gate_PartialPredictResponseProto | null);
  'fitStatus'?: (_com_platform_gate_FitStatusProto | null);
  'deferredBillingCharge'?: (_com_platform_gate_DeferredBillingChargeRequestProto | null);
  'deferredBillingCharges'?: (_com_platform_gate_DeferredBillingChargesProto | null);
  'error'?: (_com_platform_gate_ApiErrorProto | null);
  'headers'?: ({[key: string]: string});
  'body'?: "heartBeat"|"startServing"|"stopServing"|"predict"|"fit"|"ext"|"status"|"batch"|"partialPredict"|"fitStatus"|"deferredBillingCharge"|"deferredBillingCharges"|"error";
}

export interface ServiceToGateProto__Output {
  'requestId'?: (number);
  'heartBeat'?: (_com_platform_gate_HeartBeatProto__Output);
  'startServing'?: (_com_platform_gate_StartServingProto__Output);
  'stopServing'?: (_com_platform_gate_StopServingProto__Output);
  'predict'?: (_com_platform_gate_PredictResponseProto__Output);
  'fit'?: (_com_platform_gate_FitResponseProto__Output);
  'ext'?: (_com_platform_gate_ExtendedResponseProto__Output);
  'status'?: (_com_platform_gate_StatusResponseProto__Output);
  'batch'?: (_com_platform_gate_BatchResponseProto__Output);
  'partialPredict'?: (_com_platform_gate_PartialPredictResponseProto__Output);
  'fitStatus'?: (_com_platform_gate_FitStatusProto__Output);
  'deferredBillingCharge'?: (_com_platform_gate_DeferredBillingChargeRequestProto__Output);
  'deferredBillingCharges'?: (_com_platform_gate_DeferredBillingChargesProto__Output);
  'error'?: (_com_platform_gate_ApiErrorProto__Output);
  'headers': ({[key: string]: string});
  'body'?: "heartBeat"|"startServing"|"stopServing"|"predict"|"fit"|"ext"|"status"|"batch"|"partialPredict"|"fitStatus"|"deferredBillingCharge"|"deferredBillingCharges"|"error";
}
