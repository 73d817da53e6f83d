// Original file: gate.proto

import type { Long } from '@grpc/proto-loader';

export interface ServiceInfoProto {
  'accountId'?: (number | string | Long);
  'modelId'?: (number | string | Long);
  'modelName'?: (string);
  'authToken'?: (string);
  'bucketName'?: (string);
  '_bucketName'?: "bucketName";
}

export interface ServiceInfoProto__Output {
  'accountId'?: (number);
  'modelId'?: (number);
  'modelName'?: (string);
  'authToken'?: (string);
  'bucketName'?: (string);
  '_bucketName'?: "bucketName";
}
