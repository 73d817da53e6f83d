// Original file: gate.proto

import type { Long } from '@grpc/proto-loader';

export interface DeferredBillingParamsProto {
  'callerAccountId'?: (number | string | Long);
  'apiKeyName'?: (string);
  'billingKeyName'?: (string);
  'billingAccountId'?: (number | string | Long);
  'billingUserId'?: (string);
  '_callerAccountId'?: "callerAccountId";
  '_apiKeyName'?: "apiKeyName";
  '_billingKeyName'?: "billingKeyName";
  '_billingAccountId'?: "billingAccountId";
  '_billingUserId'?: "billingUserId";
}

export interface DeferredBillingParamsProto__Output {
  'callerAccountId'?: (number);
  'apiKeyName'?: (string);
  'billingKeyName'?: (string);
  'billingAccountId'?: (number);
  'billingUserId'?: (string);
  '_callerAccountId'?: "callerAccountId";
  '_apiKeyName'?: "apiKeyName";
  '_billingKeyName'?: "billingKeyName";
  '_billingAccountId'?: "billingAccountId";
  '_billingUserId'?: "billingUserId";
}
