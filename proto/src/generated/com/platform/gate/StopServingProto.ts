// Original file: gate.proto


export interface StopServingProto {
  'reason'?: (string);
  '_reason'?: "reason";
}

export interface StopServingProto__Output {
  'reason'?: (string);
  '_reason'?: "reason";
}
