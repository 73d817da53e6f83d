// Original file: gate.proto

import type { ParamDescriptorProto as _com_platform_gate_ParamDescriptorProto, ParamDescriptorProto__Output as _com_platform_gate_ParamDescriptorProto__Output } from '../../../com/platform/gate/ParamDescriptorProto.js';

export interface MethodDescriptorProto {
  'input'?: ({[key: string]: _com_platform_gate_ParamDescriptorProto});
  'output'?: (_com_platform_gate_ParamDescriptorProto | null);
  'fitted'?: (boolean);
  '_fitted'?: "fitted";
}

export interface MethodDescriptorProto__Output {
  'input': ({[key: string]: _com_platform_gate_ParamDescriptorProto__Output});
  'output'?: (_com_platform_gate_ParamDescriptorProto__Output);
  'fitted'?: (boolean);
  '_fitted'?: "fitted";
}
