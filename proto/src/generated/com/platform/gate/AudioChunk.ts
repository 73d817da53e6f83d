// Original file: gate.proto


export interface AudioChunk {
  'data'?: (Buffer | Uint8Array | string);
}

export interface AudioChunk__Output {
  'data'?: (Buffer);
}
