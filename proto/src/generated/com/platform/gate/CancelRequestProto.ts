// Original file: gate.proto

import type { Long } from '@grpc/proto-loader';

export interface CancelRequestProto {
  'requestIdToCancel'?: (number | string | Long);
}

export interface CancelRequestProto__Output {
  'requestIdToCancel'?: (number);
}
