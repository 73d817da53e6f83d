// Original file: gate.proto

import type { SimpleStatusProto as _com_platform_gate_SimpleStatusProto, SimpleStatusProto__Output as _com_platform_gate_SimpleStatusProto__Output } from '../../../com/platform/gate/SimpleStatusProto.js';

export interface ApiErrorProto {
  'code'?: (string);
  'message'?: (string);
  'status'?: (_com_platform_gate_SimpleStatusProto);
  'args'?: ({[key: string]: string});
  /**
   * An arbitrary HTTP status code; takes priority over status.
   */
  'statusCode'?: (number);
  '_status'?: "status";
  '_statusCode'?: "statusCode";
}

export interface ApiErrorProto__Output {
  'code'?: (string);
  'message'?: (string);
  'status'?: (_com_platform_gate_SimpleStatusProto__Output);
  'args': ({[key: string]: string});
  /**
   * An arbitrary HTTP status code; takes priority over status.
   */
  'statusCode'?: (number);
  '_status'?: "status";
  '_statusCode'?: "statusCode";
}
