// Original file: gate.proto

import type { AsrRequestProto as _com_platform_gate_AsrRequestProto, AsrRequestProto__Output as _com_platform_gate_AsrRequestProto__Output } from '../../../com/platform/gate/AsrRequestProto.js';

export interface ClientAsrRequestProto {
  'account'?: (string);
  'model'?: (string);
  'authToken'?: (string);
  'asr'?: (_com_platform_gate_AsrRequestProto | null);
}

export interface ClientAsrRequestProto__Output {
  'account'?: (string);
  'model'?: (string);
  'authToken'?: (string);
  'asr'?: (_com_platform_gate_AsrRequestProto__Output);
}
