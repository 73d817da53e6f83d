// Original file: gate.proto


export interface ClusterUpdateProto {
  'servers'?: (string)[];
  'currentServer'?: (string);
}

export interface ClusterUpdateProto__Output {
  'servers': (string)[];
  'currentServer'?: (string);
}
