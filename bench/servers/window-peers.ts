/**
 * The two ends of bench/receive-window.ts: a grpc-js server and a grpc-js client joined by one bidi
 * stream of raw bytes (no protobuf: the figure is the transfer's). One end sends BENCH_MESSAGES
 * messages of 4 MiB, each written when the last has gone (as the gateway writes requests to a
 * service's stream, and a service its answers); the other receives them and answers the bench's IPC
 * `result` request with its CPU and wall time per message, the first five (warm-up) left out.
 *
 * BENCH_END=server starts the server (it reports `ready` with its port first); BENCH_END=client the
 * client, dialling BENCH_TARGET. BENCH_RECEIVER (server or client) says which end receives. The
 * receiving client gets the channel options in BENCH_CHANNEL_OPTIONS (JSON); a receiving server
 * widens its connection's window as the gateway does for a registered service when BENCH_WIDEN is set.
 */
import * as grpc from '@grpc/grpc-js';
import { widenServiceWindow } from '../../core/grpc/service-window.js';

const raw = (bytes: Buffer) => bytes;
const PUMP = {
  path: '/bench.Window/pump',
  requestStream: true,
  responseStream: true,
  requestSerialize: raw,
  requestDeserialize: raw,
  responseSerialize: raw,
  responseDeserialize: raw,
};
const WARMUP = 5;
const total = Number(process.env.BENCH_MESSAGES ?? 40);
const message = Buffer.alloc(4 * 1024 * 1024, 0x61);
const receiverIsServer = process.env.BENCH_RECEIVER === 'server';

/** Writes `total` messages on `stream`, each once the last has gone. */
function send(stream: grpc.ClientDuplexStream<Buffer, Buffer> | grpc.ServerDuplexStream<Buffer, Buffer>): void {
  let left = total;
  const next = () => {
    if (left-- > 0) stream.write(message, next);
  };
  next();
}

/** The receiver's costs once all messages have come, answered to the bench's IPC `result` request. */
let result: { cpuMs: number; wallMs: number } | undefined;
let asked = false;
const answer = () => {
  if (asked && result) process.send?.({ type: 'result', ...result });
};
process.on('message', (m: { type?: string }) => {
  if (m.type !== 'result') return;
  asked = true;
  answer();
});

/** Counts the messages of `stream` and keeps the receiver's costs once all have come. */
function receive(stream: NodeJS.EventEmitter, done: () => void): void {
  let received = 0;
  let started = 0;
  let cpuBefore: NodeJS.CpuUsage | undefined;
  stream.on('data', () => {
    if (++received === WARMUP) {
      started = performance.now();
      cpuBefore = process.cpuUsage();
    }
    if (received < total) return;
    const cpu = process.cpuUsage(cpuBefore);
    const measured = total - WARMUP;
    result = { cpuMs: (cpu.user + cpu.system) / 1000 / measured, wallMs: (performance.now() - started) / measured };
    answer();
    done();
  });
}

if (process.env.BENCH_END === 'server') {
  const server = new grpc.Server({ 'grpc.max_send_message_length': -1, 'grpc.max_receive_message_length': -1 });
  server.addService(
    { pump: PUMP },
    {
      pump(stream: grpc.ServerDuplexStream<Buffer, Buffer>) {
        if (!receiverIsServer) return void stream.once('data', () => send(stream));
        if (process.env.BENCH_WIDEN) widenServiceWindow(stream);
        receive(stream, () => stream.end());
      },
    },
  );
  server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) => {
    if (err) throw err;
    process.send?.({ type: 'ready', port });
  });
} else {
  const Client = grpc.makeGenericClientConstructor({ pump: PUMP }, 'Window');
  const client = new Client(process.env.BENCH_TARGET!, grpc.credentials.createInsecure(), {
    'grpc.max_send_message_length': -1,
    'grpc.max_receive_message_length': -1,
    ...(JSON.parse(process.env.BENCH_CHANNEL_OPTIONS ?? '{}') as grpc.ChannelOptions),
  });
  const stream = client.pump!() as grpc.ClientDuplexStream<Buffer, Buffer>;
  stream.on('error', () => undefined);
  if (receiverIsServer) send(stream);
  else {
    receive(stream, () => stream.cancel());
    stream.write(Buffer.alloc(1)); // any first message starts the server's sending
  }
}
