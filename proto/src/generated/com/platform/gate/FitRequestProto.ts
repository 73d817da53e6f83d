// Original file: gate.proto

import type { PayloadProto as _com_platform_gate_PayloadProto, PayloadProto__Output as _com_platform_gate_PayloadProto__Output } from '../../../com/platform/gate/PayloadProto.js';
import type { ServiceInfoProto as _com_platform_gate_ServiceInfoProto, ServiceInfoProto__Output as _com_platform_gate_ServiceInfoProto__Output } from '../../../com/platform/gate/ServiceInfoProto.js';
import type { DatasetInfoProto as _com_platform_gate_DatasetInfoProto, DatasetInfoProto__Output as _com_platform_gate_DatasetInfoProto__Output } from '../../../com/platform/gate/DatasetInfoProto.js';

export interface FitRequestProto {
  'trainData'?: (_com_platform_gate_PayloadProto | null);
  'targetsData'?: (_com_platform_gate_PayloadProto | null);
  'config'?: (_com_platform_gate_PayloadProto | null);
  'modelDir'?: (string);
  'previousModelDir'?: (string);
  'targetServiceInfo'?: (_com_platform_gate_ServiceInfoProto | null);
  'datasetInfo'?: (_com_platform_gate_DatasetInfoProto | null);
  '_previousModelDir'?: "previousModelDir";
}

export interface FitRequestProto__Output {
  'trainData'?: (_com_platform_gate_PayloadProto__Output);
  'targetsData'?: (_com_platform_gate_PayloadProto__Output);
  'config'?: (_com_platform_gate_PayloadProto__Output);
  'modelDir'?: (string);
  'previousModelDir'?: (string);
  'targetServiceInfo'?: (_com_platform_gate_ServiceInfoProto__Output);
  'datasetInfo'?: (_com_platform_gate_DatasetInfoProto__Output);
  '_previousModelDir'?: "previousModelDir";
}
