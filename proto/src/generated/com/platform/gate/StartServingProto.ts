// Original file: gate.proto

import type { ServiceDescriptorProto as _com_platform_gate_ServiceDescriptorProto, ServiceDescriptorProto__Output as _com_platform_gate_ServiceDescriptorProto__Output } from '../../../com/platform/gate/ServiceDescriptorProto.js';
import type { Long } from '@grpc/proto-loader';

export interface StartServingProto {
  /**
   * The secret registration key given to the service through its environment.
   */
  'connectionToken'?: (string);
  'serviceDescriptor'?: (_com_platform_gate_ServiceDescriptorProto | null);
  'hostname'?: (string);
  'version'?: (number | string | Long);
  'image'?: (string);
  /**
   * One process lifetime: stable within a run, regenerated on restart.
   */
  'instanceBootUuid'?: (string);
  '_hostname'?: "hostname";
  '_version'?: "version";
  '_image'?: "image";
  '_instanceBootUuid'?: "instanceBootUuid";
}

export interface StartServingProto__Output {
  /**
   * The secret registration key given to the service through its environment.
   */
  'connectionToken'?: (string);
  'serviceDescriptor'?: (_com_platform_gate_ServiceDescriptorProto__Output);
  'hostname'?: (string);
  'version'?: (number);
  'image'?: (string);
  /**
   * One process lifetime: stable within a run, regenerated on restart.
   */
  'instanceBootUuid'?: (string);
  '_hostname'?: "hostname";
  '_version'?: "version";
  '_image'?: "image";
  '_instanceBootUuid'?: "instanceBootUuid";
}
