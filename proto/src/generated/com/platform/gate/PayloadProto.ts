// Original file: gate.proto


export interface PayloadProto {
  /**
   * The class name of what is encoded in the body.
   */
  'dataType'?: (string);
  'json'?: (string);
  'protobuf'?: (Buffer | Uint8Array | string);
  '_dataType'?: "dataType";
  'body'?: "json"|"protobuf";
}

export interface PayloadProto__Output {
  /**
   * The class name of what is encoded in the body.
   */
  'dataType'?: (string);
  'json'?: (string);
  'protobuf'?: (Buffer);
  '_dataType'?: "dataType";
  'body'?: "json"|"protobuf";
}
