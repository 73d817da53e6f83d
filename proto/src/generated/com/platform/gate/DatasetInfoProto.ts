// Original file: gate.proto

import type { Long } from '@grpc/proto-loader';

export interface DatasetInfoProto {
  'accountId'?: (number | string | Long);
  'datasetId'?: (number | string | Long);
  'name'?: (string);
  'type'?: (string);
}

export interface DatasetInfoProto__Output {
  'accountId'?: (number);
  'datasetId'?: (number);
  'name'?: (string);
  'type'?: (string);
}
