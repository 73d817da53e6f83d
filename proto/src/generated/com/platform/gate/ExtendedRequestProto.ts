// Original file: gate.proto

import type { PayloadProto as _com_platform_gate_PayloadProto, PayloadProto__Output as _com_platform_gate_PayloadProto__Output } from '../../../com/platform/gate/PayloadProto.js';

export interface ExtendedRequestProto {
  'methodName'?: (string);
  'params'?: ({[key: string]: _com_platform_gate_PayloadProto});
}

export interface ExtendedRequestProto__Output {
  'methodName'?: (string);
  'params': ({[key: string]: _com_platform_gate_PayloadProto__Output});
}
