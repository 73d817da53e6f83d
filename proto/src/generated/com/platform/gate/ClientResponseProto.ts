// Original file: gate.proto

import type { PredictResponseProto as _com_platform_gate_PredictResponseProto, PredictResponseProto__Output as _com_platform_gate_PredictResponseProto__Output } from '../../../com/platform/gate/PredictResponseProto.js';
import type { ExtendedResponseProto as _com_platform_gate_ExtendedResponseProto, ExtendedResponseProto__Output as _com_platform_gate_ExtendedResponseProto__Output } from '../../../com/platform/gate/ExtendedResponseProto.js';
import type { PartialPredictResponseProto as _com_platform_gate_PartialPredictResponseProto, PartialPredictResponseProto__Output as _com_platform_gate_PartialPredictResponseProto__Output } from '../../../com/platform/gate/PartialPredictResponseProto.js';
import type { ApiErrorProto as _com_platform_gate_ApiErrorProto, ApiErrorProto__Output as _com_platform_gate_ApiErrorProto__Output } from '../../../com/platform/gate/ApiErrorProto.js';

export interface ClientResponseProto {
  'predict'?: (_com_platform_gate_PredictResponseProto | null);
  'ext'?: (_com_platform_gate_ExtendedResponseProto | null);
  'partialPredict'?: (_com_platform_gate_PartialPredictResponseProto | null);
  'error'?: (_com_platform_gate_ApiErrorProto | null);
  'headers'?: ({[key: string]: string});
  'body'?: "predict"|"ext"|"partialPredict"|"error";
}

export interface ClientResponseProto__Output {
  'predict'?: (_com_platform_gate_PredictResponseProto__Output);
  'ext'?: (_com_platform_gate_ExtendedResponseProto__Output);
  'partialPredict'?: (_com_platform_gate_PartialPredictResponseProto__Output);
  'error'?: (_com_platform_gate_ApiErrorProto__Output);
  'headers': ({[key: string]: string});
  'body'?: "predict"|"ext"|"partialPredict"|"error";
}
