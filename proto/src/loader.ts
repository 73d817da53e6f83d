import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { ProtoGrpcType } from './generated/gate.js';
import type { GateClient, GateDefinition } from './generated/com/platform/gate/Gate.js';

/** gate.proto sits next to `src/` and `dist/`, so the same URL works from the sources and from the build. */
export const GATE_PROTO_PATH = fileURLToPath(new URL('../gate.proto', import.meta.url));

/**
 * The one set of proto-loader options used by the gateway, the SDK, the tests and the type generator
 * (proto/scripts/gen-types.ts turns them into its flags).
 * keepCase keeps the wire names of the spec (`requestId`, `audio_chunk`); longs as Number because
 * every int64 the protocol carries (IDs, amounts) stays far below 2^53; defaults off so that an
 * absent optional field reads as `undefined`; oneofs on so that `body` names the member that is set.
 */
export const PROTO_LOADER_OPTS = {
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: false,
  arrays: true,
  objects: true,
  oneofs: true,
} as const satisfies protoLoader.Options;

/** gRPC messages may be large (datasets, audio, images): at least 100 MB both ways. */
export const MAX_MESSAGE_BYTES = 128 * 1024 * 1024;

/**
 * The HTTP/2 receive window (each stream's and the connection's) on the gateway's links with services:
 * SDK channels receive with it, and the gateway widens a registered service's connection to it
 * (core/grpc/service-window.ts). Every message behind a large one on a service's one stream waits
 * until it has crossed, and at HTTP/2's 64 KiB a 4 MiB message crosses in 64 round trips of window
 * updates: a grpc-js receiver spent 9.4-10.7 ms of CPU and 17-18.6 ms of wall time on it with the
 * sender on another core, 5.5-6.0 and 7.0-7.3 ms with 1 MiB (`npm run bench:window`). Larger windows
 * bought nothing more, and the window is what a peer may have in flight to one stream unread.
 */
export const RECEIVE_WINDOW_BYTES = 1024 * 1024;

let cached: ProtoGrpcType | undefined;

/** The loaded `gate.proto`, typed by the generated ProtoGrpcType; parsed once per process. */
export function loadGatePackage(): ProtoGrpcType {
  if (!cached) {
    const definition = protoLoader.loadSync(GATE_PROTO_PATH, PROTO_LOADER_OPTS);
    // loadPackageDefinition returns the untyped GrpcObject; ProtoGrpcType is its generated shape.
    cached = grpc.loadPackageDefinition(definition) as unknown as ProtoGrpcType;
  }
  return cached;
}

/** The Gate service's full name, as gRPC paths (`/<name>/<method>`) and trace spans spell it. */
export const GATE_SERVICE_NAME = 'com.platform.gate.Gate';

export function gateServiceDefinition(): GateDefinition {
  return loadGatePackage().com.platform.gate.Gate.service;
}

/** The constructor of the generated `GateClient` stub. */
export function gateClientConstructor(): new (
  address: string,
  credentials: grpc.ChannelCredentials,
  options?: grpc.ChannelOptions,
) => GateClient {
  return loadGatePackage().com.platform.gate.Gate;
}
