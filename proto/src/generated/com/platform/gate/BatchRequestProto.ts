// Original file: gate.proto

import type { BatchPayloadProto as _com_platform_gate_BatchPayloadProto, BatchPayloadProto__Output as _com_platform_gate_BatchPayloadProto__Output } from '../../../com/platform/gate/BatchPayloadProto.js';
import type { PayloadProto as _com_platform_gate_PayloadProto, PayloadProto__Output as _com_platform_gate_PayloadProto__Output } from '../../../com/platform/gate/PayloadProto.js';

export interface BatchRequestProto {
  'data'?: (_com_platform_gate_BatchPayloadProto)[];
  'config'?: (_com_platform_gate_PayloadProto | null);
}

export interface BatchRequestProto__Output {
  'data': (_com_platform_gate_BatchPayloadProto__Output)[];
  'config'?: (_com_platform_gate_PayloadProto__Output);
}
