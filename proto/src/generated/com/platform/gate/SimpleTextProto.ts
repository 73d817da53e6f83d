// Original file: gate.proto


export interface SimpleTextProto {
  'text'?: (string);
}

export interface SimpleTextProto__Output {
  'text'?: (string);
}
