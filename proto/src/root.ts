import protobuf from 'protobufjs';
import { GATE_PROTO_PATH, PROTO_LOADER_OPTS } from './loader.js';

let root: protobuf.Root | undefined;

/**
 * gate.proto as a protobufjs Root (field names kept as written), for what the gRPC loader does not
 * expose: encoding the speech messages carried in payloads, and the enum values. Parsed once.
 */
export function gateRoot(): protobuf.Root {
  if (!root) {
    root = new protobuf.Root();
    root.loadSync(GATE_PROTO_PATH, { keepCase: true });
  }
  return root;
}

export function gateType(name: string): protobuf.Type {
  return gateRoot().lookupType(`com.platform.gate.${name}`);
}

/**
 * A decoder of one message type of gate.proto that gives what the gRPC loader's deserializers give
 * (PROTO_LOADER_OPTS), for a message that is not a method's whole request or answer.
 */
export function messageDecoder<T>(name: string): (bytes: Uint8Array) => T {
  const messageType = gateType(name);
  return (bytes) => messageType.toObject(messageType.decode(bytes), PROTO_LOADER_OPTS) as T;
}
