import type * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import { GATE_PROTO_PATH, PROTO_LOADER_OPTS } from '../../proto/src/index.js';

/**
 * gRPC server reflection (v1 and v1alpha) for the Gate service, so grpcurl, Postman and other
 * generic clients list and call it without a copy of proto/gate.proto. It describes only what is
 * public in the proto file; every call is still admitted as usual.
 */
export function addGateReflection(server: Pick<grpc.Server, 'addService'>): void {
  new ReflectionService(protoLoader.loadSync(GATE_PROTO_PATH, PROTO_LOADER_OPTS)).addToServer(server);
}
