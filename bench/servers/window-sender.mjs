/**
 * For bench/receive-window.ts: a grpc-js server whose one bidi method answers a request of N (a
 * 4-byte count) with N messages of 4 MiB, each written when the last has gone, the way the gateway
 * writes a large request to a service's stream. Raw bytes, no protobuf: the figure is the transfer's.
 */
import { Buffer } from 'node:buffer';
import * as grpc from '@grpc/grpc-js';
import { PUMP } from './window-method.mjs';

const message = Buffer.alloc(4 * 1024 * 1024, 0x61);
const server = new grpc.Server({ 'grpc.max_send_message_length': -1, 'grpc.max_receive_message_length': -1 });
server.addService(
  { pump: PUMP },
  {
    pump(call) {
      call.on('data', (request) => {
        let left = request.readUInt32BE(0);
        const next = () => left-- > 0 && call.write(message, next);
        next();
      });
    },
  },
);
server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) => {
  if (err) throw err;
  process.send?.({ type: 'ready', port });
});
