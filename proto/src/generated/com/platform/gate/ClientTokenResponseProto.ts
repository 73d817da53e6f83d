// Original file: gate.proto


export interface ClientTokenResponseProto {
  'token'?: (string);
}

export interface ClientTokenResponseProto__Output {
  'token'?: (string);
}
