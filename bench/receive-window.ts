/**
 * `npm run bench:window`: what the SDK's HTTP/2 receive window (sdk/grpc.ts, RECEIVE_WINDOW_BYTES)
 * buys a service that receives large messages. A grpc-js server (bench/servers/window-sender.mjs)
 * sends 4 MiB messages one after another on one bidi stream, as the gateway writes requests to a
 * service's stream; a grpc-js client receives them with HTTP/2's default window (64 KiB), then with
 * the SDK's channel options, in alternating rounds, with sender and receiver on two cores and on one
 * shared core. Prints the receiver's CPU and wall time per message, median of the rounds.
 */
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { BASE_CHANNEL_OPTIONS } from '../sdk/grpc.js';
import { startChild } from './lib/procs.js';
import { median } from './lib/stats.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, messages: { type: 'string', default: '40' } } });
const rounds = Number(values.rounds);
const sides = { default: {}, sdk: BASE_CHANNEL_OPTIONS } as const;
const placements = availableParallelism() > 1 ? { 'two cores': ['0', '1'], 'one core': ['0', '0'] } : { 'one core': ['0', '0'] };

for (const [placement, [senderCpu, receiverCpu]] of Object.entries(placements)) {
  const sender = await startChild('window-sender', {
    script: 'bench/servers/window-sender.mjs',
    prefix: ['taskset', '-c', senderCpu!],
    waitReady: true,
  });
  try {
    const results: Record<string, { cpuMs: number[]; wallMs: number[] }> = {
      default: { cpuMs: [], wallMs: [] },
      sdk: { cpuMs: [], wallMs: [] },
    };
    for (let round = 0; round < rounds; round++) {
      for (const side of round % 2 ? (['sdk', 'default'] as const) : (['default', 'sdk'] as const)) {
        const receiver = await startChild('window-receiver', {
          script: 'bench/servers/window-receiver.mjs',
          prefix: ['taskset', '-c', receiverCpu!],
          env: {
            BENCH_TARGET: `127.0.0.1:${sender.ready.port as number}`,
            BENCH_MESSAGES: values.messages,
            BENCH_CHANNEL_OPTIONS: JSON.stringify(sides[side]),
          },
          waitReady: true,
          readyTimeoutMs: 120_000,
        });
        const result = receiver.ready as { cpuMs: number; wallMs: number };
        await receiver.stop();
        results[side]!.cpuMs.push(result.cpuMs);
        results[side]!.wallMs.push(result.wallMs);
      }
    }
    for (const [side, r] of Object.entries(results)) {
      const window =
        side === 'sdk'
          ? `the SDK's ${(Number(BASE_CHANNEL_OPTIONS['grpc-node.flow_control_window']) / 1024).toFixed(0)} KiB window`
          : 'the default 64 KiB window';
      console.log(
        `${placement}, ${window}: receiver ${median(r.cpuMs).toFixed(2)} ms CPU and ${median(r.wallMs).toFixed(2)} ms wall per 4 MiB message (rounds: ${r.cpuMs.map((v) => v.toFixed(2)).join(', ')} ms CPU)`,
      );
    }
  } finally {
    await sender.stop();
  }
}
