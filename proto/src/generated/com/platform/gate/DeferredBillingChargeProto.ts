// Original file: gate.proto

import type { Long } from '@grpc/proto-loader';

export interface DeferredBillingChargeProto {
  'idempotencyKey'?: (string);
  'amount'?: (number | string | Long);
  'currency'?: (string);
  'llmModelName'?: (string);
  'billingDetails'?: (string);
  '_currency'?: "currency";
  '_llmModelName'?: "llmModelName";
  '_billingDetails'?: "billingDetails";
}

export interface DeferredBillingChargeProto__Output {
  'idempotencyKey'?: (string);
  'amount'?: (number);
  'currency'?: (string);
  'llmModelName'?: (string);
  'billingDetails'?: (string);
  '_currency'?: "currency";
  '_llmModelName'?: "llmModelName";
  '_billingDetails'?: "billingDetails";
}
