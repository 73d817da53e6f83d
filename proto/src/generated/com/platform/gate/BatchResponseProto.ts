// Original file: gate.proto

import type { BatchPayloadResponseProto as _com_platform_gate_BatchPayloadResponseProto, BatchPayloadResponseProto__Output as _com_platform_gate_BatchPayloadResponseProto__Output } from '../../../com/platform/gate/BatchPayloadResponseProto.js';

export interface BatchResponseProto {
  'data'?: (_com_platform_gate_BatchPayloadResponseProto)[];
}

export interface BatchResponseProto__Output {
  'data': (_com_platform_gate_BatchPayloadResponseProto__Output)[];
}
