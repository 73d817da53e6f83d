// Original file: gate.proto


export interface FitStatusProto {
  'percentage'?: (number);
}

export interface FitStatusProto__Output {
  'percentage'?: (number);
}
