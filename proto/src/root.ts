import protobuf from 'protobufjs';
import { GATE_PROTO_PATH } from './loader.js';

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
