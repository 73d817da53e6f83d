// Original file: gate.proto

import type { AsrResponseProto as _com_platform_gate_AsrResponseProto, AsrResponseProto__Output as _com_platform_gate_AsrResponseProto__Output } from '../../../com/platform/gate/AsrResponseProto.js';
import type { ApiErrorProto as _com_platform_gate_ApiErrorProto, ApiErrorProto__Output as _com_platform_gate_ApiErrorProto__Output } from '../../../com/platform/gate/ApiErrorProto.js';

export interface ClientAsrResponseProto {
  'asr'?: (_com_platform_gate_AsrResponseProto | null);
  'error'?: (_com_platform_gate_ApiErrorProto | null);
  'body'?: "asr"|"error";
}

export interface ClientAsrResponseProto__Output {
  'asr'?: (_com_platform_gate_AsrResponseProto__Output);
  'error'?: (_com_platform_gate_ApiErrorProto__Output);
  'body'?: "asr"|"error";
}
