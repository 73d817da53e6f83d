/**
 * Scenario 6: `Gate.process` unary predict round trips per second, the SDK's GateClient in this
 * process against (a) the gRPC ceiling (a grpc-js server answering at once) and (b) our gateway
 * routing to the echo service. `concurrency` calls are kept in flight on one channel.
 */
import { BENCH_KEY, chatRequest } from '../lib/config.js';
import { Samples, spread, type Spread } from '../lib/stats.js';
import type { Systems } from '../lib/systems.js';
import { GateClient, type ClientRequestBody } from '../../sdk/index.js';

export interface GrpcOptions {
  rounds: number;
  durationSec: number;
  warmupSec: number;
  concurrency: number;
  log: (line: string) => void;
}

export interface GrpcRun {
  rps: number;
  calls: number;
  errors: number;
  latencyMs: { p50: number; p99: number };
}

export interface GrpcResult {
  settings: Omit<GrpcOptions, 'log'>;
  ceiling: GrpcRun[];
  gateway: GrpcRun[];
  summary: { ceilingRps: Spread; gatewayRps: Spread; gatewayP50Ms: Spread; gatewayP99Ms: Spread; gatewayVsCeiling: Spread };
}

async function drive(client: GateClient, body: ClientRequestBody, durationSec: number, concurrency: number): Promise<GrpcRun> {
  const latencies = new Samples();
  let errors = 0;
  const start = performance.now();
  const until = start + durationSec * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) {
        const t = performance.now();
        try {
          await client.process(body, { account: 'bench', model: 'echo' });
          latencies.push(performance.now() - t);
        } catch {
          errors++;
        }
      }
    }),
  );
  const elapsed = (performance.now() - start) / 1000;
  const [p50, p99] = latencies.percentiles(50, 99);
  return { rps: latencies.length / elapsed, calls: latencies.length, errors, latencyMs: { p50: p50!, p99: p99! } };
}

export async function runGrpc(systems: Systems, options: GrpcOptions): Promise<GrpcResult> {
  const [ceilingChild, { grpcAddress }] = await Promise.all([systems.grpcCeiling(), systems.gatewayUrls()]);
  await systems.echo();
  const request = chatRequest('bench/echo');
  const body: ClientRequestBody = {
    predict: {
      data: { json: JSON.stringify({ model: 'bench-1', messages: request.messages }) },
      config: { json: JSON.stringify({ temperature: request.temperature, top_p: request.top_p, max_tokens: request.max_tokens }) },
    },
  };
  const clients = {
    ceiling: new GateClient({ address: ceilingChild.ready.address as string, authToken: BENCH_KEY }),
    gateway: new GateClient({ address: grpcAddress, authToken: BENCH_KEY }),
  };
  const runs: { ceiling: GrpcRun[]; gateway: GrpcRun[] } = { ceiling: [], gateway: [] };
  try {
    for (let round = 0; round < options.rounds; round++) {
      const order = round % 2 === 0 ? (['ceiling', 'gateway'] as const) : (['gateway', 'ceiling'] as const);
      for (const name of order) {
        if (options.warmupSec > 0) await drive(clients[name], body, options.warmupSec, options.concurrency);
        const run = await drive(clients[name], body, options.durationSec, options.concurrency);
        runs[name].push(run);
        options.log(
          `  gRPC round ${round + 1} ${name.padEnd(8)} ${run.rps.toFixed(0).padStart(6)} calls/s  p50 ${run.latencyMs.p50.toFixed(2)} ms  p99 ${run.latencyMs.p99.toFixed(2)} ms${run.errors ? `  (${run.errors} errors)` : ''}`,
        );
      }
    }
  } finally {
    clients.ceiling.close();
    clients.gateway.close();
  }
  const { log: _log, ...settings } = options;
  return {
    settings,
    ...runs,
    summary: {
      ceilingRps: spread(runs.ceiling.map((r) => r.rps)),
      gatewayRps: spread(runs.gateway.map((r) => r.rps)),
      gatewayP50Ms: spread(runs.gateway.map((r) => r.latencyMs.p50)),
      gatewayP99Ms: spread(runs.gateway.map((r) => r.latencyMs.p99)),
      gatewayVsCeiling: spread(runs.gateway.map((r, i) => r.rps / (runs.ceiling[i]?.rps ?? NaN))),
    },
  };
}
