/**
 * For bench/receive-window.ts: receives BENCH_MESSAGES messages of 4 MiB from window-sender.mjs with
 * the channel options in BENCH_CHANNEL_OPTIONS (JSON) and reports its CPU and wall time per message,
 * the first five (warm-up) left out, as its IPC `ready` message.
 */
import { Buffer } from 'node:buffer';
import { performance } from 'node:perf_hooks';
import * as grpc from '@grpc/grpc-js';
import { PUMP } from './window-method.mjs';

const WARMUP = 5;
const total = Number(process.env.BENCH_MESSAGES ?? 40);
const Client = grpc.makeGenericClientConstructor({ pump: PUMP });
const client = new Client(process.env.BENCH_TARGET, grpc.credentials.createInsecure(), {
  'grpc.max_receive_message_length': -1,
  ...JSON.parse(process.env.BENCH_CHANNEL_OPTIONS ?? '{}'),
});
const call = client.pump();
let received = 0;
let started;
let cpuBefore;
call.on('data', () => {
  if (++received === WARMUP) {
    started = performance.now();
    cpuBefore = process.cpuUsage();
  }
  if (received < total) return;
  const cpu = process.cpuUsage(cpuBefore);
  const measured = total - WARMUP;
  // Reported as its `ready` message: the bench waits for it (bench/lib/procs.ts).
  process.send?.({ type: 'ready', cpuMs: (cpu.user + cpu.system) / 1000 / measured, wallMs: (performance.now() - started) / measured });
  call.cancel();
  client.close();
});
call.on('error', () => undefined);
const count = Buffer.alloc(4);
count.writeUInt32BE(total);
call.write(count);
