// Original file: gate.proto


export interface ParamDescriptorProto {
  'type'?: (string);
}

export interface ParamDescriptorProto__Output {
  'type'?: (string);
}
