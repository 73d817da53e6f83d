// Original file: gate.proto


export interface StatusResponseProto {
  'connectedGates'?: (string)[];
  'connectedToAllGates'?: (boolean);
}

export interface StatusResponseProto__Output {
  'connectedGates': (string)[];
  'connectedToAllGates'?: (boolean);
}
