// Original file: gate.proto

import type { Long } from '@grpc/proto-loader';

export interface DeferredBillingChargeRequestProto {
  'billingRequestId'?: (string);
  'amountInUnits'?: (number | string | Long);
}

export interface DeferredBillingChargeRequestProto__Output {
  'billingRequestId'?: (string);
  'amountInUnits'?: (number);
}
