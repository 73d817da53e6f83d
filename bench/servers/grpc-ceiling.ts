/**
 * The gRPC ceiling: a grpc-js server with the Gate service whose `process` answers at once with the
 * fixed body as a predict answer, with the gateway's server options. The most `Gate.process` round
 * trips grpc-js serves here, to read the gateway's gRPC figure against.
 */
import * as grpc from '@grpc/grpc-js';
import type { ClientResponseProto } from '../../core/gate/messages.js';
import { MAX_MESSAGE_BYTES, gateServiceDefinition } from '../../core/gate/proto.js';
import { reportReady } from '../lib/procs.js';

const answer: ClientResponseProto = { predict: { data: { json: process.env.BENCH_BODY ?? '{}' } } };
const server = new grpc.Server({
  'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
  'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
});
server.addService(gateServiceDefinition(), {
  process: (_call: unknown, callback: grpc.sendUnaryData<ClientResponseProto>) => callback(null, answer),
} as unknown as grpc.UntypedServiceImplementation);
const port = await new Promise<number>((resolve, reject) => {
  server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, bound) => (err ? reject(err) : resolve(bound)));
});
reportReady({ address: `127.0.0.1:${port}` });
