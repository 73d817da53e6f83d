// Original file: gate.proto

import type { MethodDescriptorProto as _com_platform_gate_MethodDescriptorProto, MethodDescriptorProto__Output as _com_platform_gate_MethodDescriptorProto__Output } from '../../../com/platform/gate/MethodDescriptorProto.js';

export interface ServiceDescriptorProto {
  'name'?: (string);
  'fittable'?: (boolean);
  'methods'?: ({[key: string]: _com_platform_gate_MethodDescriptorProto});
  /**
   * Protobuf-spec content for special data types (experimental).
   */
  'schemaFiles'?: ({[key: string]: string});
}

export interface ServiceDescriptorProto__Output {
  'name'?: (string);
  'fittable'?: (boolean);
  'methods': ({[key: string]: _com_platform_gate_MethodDescriptorProto__Output});
  /**
   * Protobuf-spec content for special data types (experimental).
   */
  'schemaFiles': ({[key: string]: string});
}
