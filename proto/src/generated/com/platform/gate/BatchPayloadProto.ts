// Original file: gate.proto

import type { PayloadProto as _com_platform_gate_PayloadProto, PayloadProto__Output as _com_platform_gate_PayloadProto__Output } from '../../../com/platform/gate/PayloadProto.js';
import type { Long } from '@grpc/proto-loader';

export interface BatchPayloadProto {
  'requestId'?: (number | string | Long);
  'data'?: (_com_platform_gate_PayloadProto | null);
  'headers'?: ({[key: string]: string});
  'statusCode'?: (number);
  '_statusCode'?: "statusCode";
}

export interface BatchPayloadProto__Output {
  'requestId'?: (number);
  'data'?: (_com_platform_gate_PayloadProto__Output);
  'headers': ({[key: string]: string});
  'statusCode'?: (number);
  '_statusCode'?: "statusCode";
}
