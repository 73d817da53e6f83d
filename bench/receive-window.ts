/**
 * `npm run bench:window`: what the wider HTTP/2 receive windows buy the receiver of large messages.
 * Two grpc-js peers (bench/servers/window-peers.ts) on one bidi stream, one sending 4 MiB messages one
 * after another, in alternating rounds, with sender and receiver on two cores and on one shared core:
 * - a service receiving the gateway's requests: a client with HTTP/2's default window (64 KiB), then
 *   with the SDK's channel options (sdk/grpc.ts; the protocol's RECEIVE_WINDOW_BYTES);
 * - the gateway receiving a service's answers: a server with the default window, then with its
 *   connection widened as the gateway widens a registered service's (core/grpc/service-window.ts).
 * Prints the receiver's CPU and wall time per message, median of the rounds.
 */
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { BASE_CHANNEL_OPTIONS } from '../sdk/grpc.js';
import { startChild } from './lib/procs.js';
import { median } from './lib/stats.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, messages: { type: 'string', default: '40' } } });
const rounds = Number(values.rounds);
const KiB = 1024;
const sdkWindow = `${Number(BASE_CHANNEL_OPTIONS['grpc-node.flow_control_window']) / KiB} KiB`;
const cases: Record<string, { receiver: 'client' | 'server'; env: Record<string, string> }> = {
  'a service receiving, the default 64 KiB window': { receiver: 'client', env: {} },
  [`a service receiving, the SDK's ${sdkWindow} window`]: {
    receiver: 'client',
    env: { BENCH_CHANNEL_OPTIONS: JSON.stringify(BASE_CHANNEL_OPTIONS) },
  },
  'the gateway receiving, the default 64 KiB window': { receiver: 'server', env: {} },
  "the gateway receiving, a registered service's wider window": { receiver: 'server', env: { BENCH_WIDEN: '1' } },
};
const placements = availableParallelism() > 1 ? { 'two cores': ['0', '1'], 'one core': ['0', '0'] } : { 'one core': ['0', '0'] };

/** One run: the receiver's CPU and wall ms per message. */
async function run(receiver: 'client' | 'server', env: Record<string, string>, cpus: string[]): Promise<{ cpuMs: number; wallMs: number }> {
  const common = { BENCH_MESSAGES: values.messages!, BENCH_RECEIVER: receiver, ...env };
  const server = await startChild('window-server', {
    script: 'bench/servers/window-peers.ts',
    prefix: ['taskset', '-c', receiver === 'server' ? cpus[1]! : cpus[0]!],
    env: { ...common, BENCH_END: 'server' },
    waitReady: true,
  });
  const client = await startChild('window-client', {
    script: 'bench/servers/window-peers.ts',
    prefix: ['taskset', '-c', receiver === 'server' ? cpus[0]! : cpus[1]!],
    env: { ...common, BENCH_END: 'client', BENCH_TARGET: `127.0.0.1:${server.ready.port as number}` },
  });
  try {
    return await (receiver === 'server' ? server : client).ask<{ cpuMs: number; wallMs: number }>('result', 120_000);
  } finally {
    await client.stop();
    await server.stop();
  }
}

for (const [placement, cpus] of Object.entries(placements)) {
  const results = new Map<string, { cpuMs: number[]; wallMs: number[] }>();
  for (let round = 0; round < rounds; round++) {
    const order = Object.entries(cases);
    if (round % 2) order.reverse();
    for (const [name, c] of order) {
      const r = await run(c.receiver, c.env, cpus);
      const kept = results.get(name) ?? { cpuMs: [], wallMs: [] };
      kept.cpuMs.push(r.cpuMs);
      kept.wallMs.push(r.wallMs);
      results.set(name, kept);
    }
  }
  for (const name of Object.keys(cases)) {
    const r = results.get(name)!;
    console.log(
      `${placement}, ${name}: ${median(r.cpuMs).toFixed(2)} ms CPU and ${median(r.wallMs).toFixed(2)} ms wall per 4 MiB message (rounds: ${r.cpuMs.map((v) => v.toFixed(2)).join(', ')} ms CPU)`,
    );
  }
}
