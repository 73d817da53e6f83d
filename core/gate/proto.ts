import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

export const GATE_PROTO_PATH = fileURLToPath(new URL('../../proto/gate.proto', import.meta.url));

/**
 * The one set of proto-loader options used by the gateway, the SDK and the tests.
 * keepCase keeps the wire names of the spec (`requestId`, `audio_chunk`); longs as Number because
 * every int64 the protocol carries (IDs, amounts) stays far below 2^53; defaults off so that an
 * absent optional field reads as `undefined`; oneofs on so that `body` names the member that is set.
 */
export const PROTO_LOADER_OPTS: protoLoader.Options = {
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: false,
  arrays: true,
  objects: true,
  oneofs: true,
};

/** gRPC messages may be large (datasets, audio, images): at least 100 MB both ways. */
export const MAX_MESSAGE_BYTES = 128 * 1024 * 1024;

let cached: grpc.GrpcObject | undefined;

/** The loaded `com.platform.gate` package; parsed once per process. */
export function loadGatePackage(): grpc.GrpcObject {
  if (!cached) {
    const definition = protoLoader.loadSync(GATE_PROTO_PATH, PROTO_LOADER_OPTS);
    cached = grpc.loadPackageDefinition(definition);
  }
  return cached;
}

export function gateServiceDefinition(): grpc.ServiceDefinition {
  const pkg = loadGatePackage() as unknown as {
    com: { platform: { gate: { Gate: grpc.ServiceClientConstructor } } };
  };
  return pkg.com.platform.gate.Gate.service;
}

export function gateClientConstructor(): grpc.ServiceClientConstructor {
  const pkg = loadGatePackage() as unknown as {
    com: { platform: { gate: { Gate: grpc.ServiceClientConstructor } } };
  };
  return pkg.com.platform.gate.Gate;
}
