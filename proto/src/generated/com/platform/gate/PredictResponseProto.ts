// Original file: gate.proto

import type { PayloadProto as _com_platform_gate_PayloadProto, PayloadProto__Output as _com_platform_gate_PayloadProto__Output } from '../../../com/platform/gate/PayloadProto.js';

export interface PredictResponseProto {
  'data'?: (_com_platform_gate_PayloadProto | null);
  'headers'?: ({[key: string]: string});
  'statusCode'?: (number);
  '_statusCode'?: "statusCode";
}

export interface PredictResponseProto__Output {
  'data'?: (_com_platform_gate_PayloadProto__Output);
  'headers': ({[key: string]: string});
  'statusCode'?: (number);
  '_statusCode'?: "statusCode";
}
