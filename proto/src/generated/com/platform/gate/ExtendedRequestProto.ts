// Original file: gate.proto


export interface ExtendedRequestProto {
  'methodName'?: (string);
  'params'?: ({[key: string]: string});
}

export interface ExtendedRequestProto__Output {
  'methodName'?: (string);
  'params': ({[key: string]: string});
}
