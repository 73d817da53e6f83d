/**
 * The gRPC ceiling: a grpc-js server with the Gate service whose `process` answers at once with the
 * fixed body as a predict answer, with the gateway's server options. The most `Gate.process` round
 * trips grpc-js serves here, to read the gateway's gRPC figure against.
 */
import * as grpc from '@grpc/grpc-js';
import { MAX_MESSAGE_BYTES, gateServiceDefinition, type ClientResponseProto, type GateHandlers } from '../../proto/src/index.js';
import { reportReady } from '../lib/procs.js';

const answer: ClientResponseProto = { predict: { data: { json: process.env.BENCH_BODY ?? '{}' } } };
const server = new grpc.Server({
  'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
  'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
});
// Only `process` is served; grpc-js answers the other methods UNIMPLEMENTED.
const answerAtOnce: GateHandlers['process'] = (_call, callback) => callback(null, answer);
server.addService(gateServiceDefinition(), { process: answerAtOnce });
const port = await new Promise<number>((resolve, reject) => {
  server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, bound) => (err ? reject(err) : resolve(bound)));
});
reportReady({ address: `127.0.0.1:${port}` });
