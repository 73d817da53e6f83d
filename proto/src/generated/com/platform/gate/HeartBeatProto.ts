// Original file: gate.proto


export interface HeartBeatProto {
  'status'?: (string);
  'interval'?: (number);
}

export interface HeartBeatProto__Output {
  'status'?: (string);
  'interval'?: (number);
}
