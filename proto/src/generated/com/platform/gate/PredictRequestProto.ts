// Original file: gate.proto

import type { PayloadProto as _com_platform_gate_PayloadProto, PayloadProto__Output as _com_platform_gate_PayloadProto__Output } from '../../../com/platform/gate/PayloadProto.js';

export interface PredictRequestProto {
  'data'?: (_com_platform_gate_PayloadProto | null);
  'config'?: (_com_platform_gate_PayloadProto | null);
}

export interface PredictRequestProto__Output {
  'data'?: (_com_platform_gate_PayloadProto__Output);
  'config'?: (_com_platform_gate_PayloadProto__Output);
}
