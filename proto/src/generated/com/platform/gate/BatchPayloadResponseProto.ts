// Original file: gate.proto

import type { PredictResponseProto as _com_platform_gate_PredictResponseProto, PredictResponseProto__Output as _com_platform_gate_PredictResponseProto__Output } from '../../../com/platform/gate/PredictResponseProto.js';
import type { ApiErrorProto as _com_platform_gate_ApiErrorProto, ApiErrorProto__Output as _com_platform_gate_ApiErrorProto__Output } from '../../../com/platform/gate/ApiErrorProto.js';
import type { Long } from '@grpc/proto-loader';

export interface BatchPayloadResponseProto {
  'requestId'?: (number | string | Long);
  'predict'?: (_com_platform_gate_PredictResponseProto | null);
  'error'?: (_com_platform_gate_ApiErrorProto | null);
  'headers'?: ({[key: string]: string});
  'body'?: "predict"|"error";
}

export interface BatchPayloadResponseProto__Output {
  'requestId'?: (number);
  'predict'?: (_com_platform_gate_PredictResponseProto__Output);
  'error'?: (_com_platform_gate_ApiErrorProto__Output);
  'headers': ({[key: string]: string});
  'body'?: "predict"|"error";
}
