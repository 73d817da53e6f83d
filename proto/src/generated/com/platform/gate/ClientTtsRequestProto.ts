// Original file: gate.proto

import type { TtsRequestProto as _com_platform_gate_TtsRequestProto, TtsRequestProto__Output as _com_platform_gate_TtsRequestProto__Output } from '../../../com/platform/gate/TtsRequestProto.js';

export interface ClientTtsRequestProto {
  'account'?: (string);
  'model'?: (string);
  'authToken'?: (string);
  'tts'?: (_com_platform_gate_TtsRequestProto | null);
}

export interface ClientTtsRequestProto__Output {
  'account'?: (string);
  'model'?: (string);
  'authToken'?: (string);
  'tts'?: (_com_platform_gate_TtsRequestProto__Output);
}
