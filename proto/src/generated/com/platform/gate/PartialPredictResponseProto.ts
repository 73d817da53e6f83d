// Original file: gate.proto

import type { PayloadProto as _com_platform_gate_PayloadProto, PayloadProto__Output as _com_platform_gate_PayloadProto__Output } from '../../../com/platform/gate/PayloadProto.js';

export interface PartialPredictResponseProto {
  'data'?: (_com_platform_gate_PayloadProto | null);
  'start'?: (boolean);
  'finish'?: (boolean);
  'headers'?: ({[key: string]: string});
  'statusCode'?: (number);
  '_start'?: "start";
  '_finish'?: "finish";
  '_statusCode'?: "statusCode";
}

export interface PartialPredictResponseProto__Output {
  'data'?: (_com_platform_gate_PayloadProto__Output);
  'start'?: (boolean);
  'finish'?: (boolean);
  'headers': ({[key: string]: string});
  'statusCode'?: (number);
  '_start'?: "start";
  '_finish'?: "finish";
  '_statusCode'?: "statusCode";
}
