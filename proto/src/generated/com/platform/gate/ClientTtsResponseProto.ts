// Original file: gate.proto

import type { TtsResponseProto as _com_platform_gate_TtsResponseProto, TtsResponseProto__Output as _com_platform_gate_TtsResponseProto__Output } from '../../../com/platform/gate/TtsResponseProto.js';
import type { ApiErrorProto as _com_platform_gate_ApiErrorProto, ApiErrorProto__Output as _com_platform_gate_ApiErrorProto__Output } from '../../../com/platform/gate/ApiErrorProto.js';

export interface ClientTtsResponseProto {
  'tts'?: (_com_platform_gate_TtsResponseProto | null);
  'error'?: (_com_platform_gate_ApiErrorProto | null);
  'body'?: "tts"|"error";
}

export interface ClientTtsResponseProto__Output {
  'tts'?: (_com_platform_gate_TtsResponseProto__Output);
  'error'?: (_com_platform_gate_ApiErrorProto__Output);
  'body'?: "tts"|"error";
}
