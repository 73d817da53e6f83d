/**
 * `npm run bench:workers [-- --rounds N] [--duration S] [--connections C]`: what `server.workers`
 * buys, gateway only. Two gateways run side by side as `npm start` runs them (core/bin/start.ts with
 * a config file), one with 1 worker and one with 2, each with its own echo service dialling its
 * shared gRPC port (the cluster update takes it to every worker). The chat adapter is saturated on
 * each in turn, alternating within every round; each autocannon connection stays with the worker
 * that accepted it, so the connections spread over the workers. Prints the median throughput of
 * each, the ratio and the machine's core count; writes bench/results/workers.json.
 *
 * The load generator (this process), the echo service and the workers share the machine's cores:
 * on a machine with few cores the figure is bound by that, not by the gateway.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { TOKENS, benchConfigInput, gatewayChatLoad, gatewayHeaders } from './lib/config.js';
import { saturate, type LoadResult } from './lib/load.js';
import { machine } from './lib/machine.js';
import { ROOT, freePort, startChild, waitFor, type Child } from './lib/procs.js';
import { median } from './lib/stats.js';

const { values } = parseArgs({ options: { rounds: { type: 'string' }, duration: { type: 'string' }, connections: { type: 'string' }, out: { type: 'string' } } });
const rounds = Number(values.rounds ?? 3);
const durationSec = Number(values.duration ?? 10);
const connections = Number(values.connections ?? 50);
const out = values.out ?? `${ROOT}bench/results/workers.json`;
const dir = mkdtempSync(join(tmpdir(), 'bench-workers-'));

interface Target {
  workers: number;
  url: string;
  children: Child[];
}

/** /health over a connection of its own (a new connection may go to another worker). */
function health(url: string): Promise<{ worker: string; echo: number }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/health`, { agent: false, headers: gatewayHeaders() }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => {
        const body = JSON.parse(text) as { instances?: Record<string, number> };
        resolve({ worker: String(res.headers['x-gateway-worker'] ?? '0'), echo: body.instances?.['bench/echo'] ?? 0 });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

async function start(workers: number): Promise<Target> {
  // The bench config without `fitting`, whose state would be split over workers on the memory store
  // (the gateway refuses that): the rest of the plugins are stateless.
  const input = benchConfigInput() as { server: Record<string, unknown>; plugins: { enabled: string[] } };
  input.plugins.enabled = input.plugins.enabled.filter((name) => name !== 'fitting');
  const [httpPort, grpcPort] = [await freePort(), await freePort()];
  input.server = { ...input.server, httpPort, grpcPort, workers, workerGrpcPort: 0 };
  const configPath = join(dir, `gateway-${workers}.json`);
  writeFileSync(configPath, JSON.stringify(input));
  const url = `http://127.0.0.1:${httpPort}`;
  const gateway = await startChild(`gateway-${workers}w`, { script: 'core/bin/start.ts', env: { GATEWAY_CONFIG: configPath } });
  await waitFor(`gateway with ${workers} workers`, async () => (await fetch(`${url}/health/ready`)).ok, 180_000);
  const echo = await startChild(`echo-${workers}w`, {
    script: 'examples/echo-service/main.ts',
    env: { PLATFORM_GRPC_HOST: `127.0.0.1:${grpcPort}`, PLATFORM_SERVICE_TOKEN: TOKENS.echo },
  });
  // Every worker must route to the service before the load starts.
  const seen = new Map<string, number>();
  await waitFor(`the echo service on every worker of ${workers}`, async () => {
    const { worker, echo: instances } = await health(url);
    seen.set(worker, instances);
    return seen.size === workers && [...seen.values()].every((n) => n > 0);
  }, 180_000);
  return { workers, url, children: [gateway, echo] };
}

const targets = [await start(1), await start(2)];
const runs = new Map<number, (LoadResult & { cpuMsPerRequest: { gateway: number; echo: number } })[]>(targets.map((t) => [t.workers, []]));
try {
  for (const t of targets) await saturate(gatewayChatLoad(t.url), { connections, durationSec: 3 }); // warm-up: JIT, connections
  for (let round = 0; round < rounds; round++) {
    // Alternate which goes first, so neither always runs on the warmer or the busier machine.
    for (const t of round % 2 ? [...targets].reverse() : targets) {
      const [gateway, echo] = t.children as [Child, Child];
      const cpuBefore = [gateway.cpuMs(), echo.cpuMs()];
      const result = await saturate(gatewayChatLoad(t.url), { connections, durationSec });
      const served = Math.max(1, result.ok);
      const cpuMsPerRequest = { gateway: ((gateway.cpuMs() - cpuBefore[0]!) * 1000) / served, echo: ((echo.cpuMs() - cpuBefore[1]!) * 1000) / served };
      runs.get(t.workers)!.push({ ...result, cpuMsPerRequest });
      process.stderr.write(`round ${round + 1}, ${t.workers} worker(s): ${result.rps.toFixed(0)} req/s, p99 ${result.latencyMs.p99.toFixed(2)} ms, non-2xx ${result.non2xx}, gateway CPU ${cpuMsPerRequest.gateway.toFixed(0)} µs/request\n`);
    }
  }
  const one = median(runs.get(1)!.map((r) => r.rps));
  const two = median(runs.get(2)!.map((r) => r.rps));
  const m = machine();
  const result = {
    machine: m,
    at: new Date().toISOString(),
    settings: { rounds, durationSec, connections, path: 'chat adapter → echo service (gRPC), memory store, stateless plugins' },
    medianRps: { oneWorker: one, twoWorkers: two },
    ratio: two / one,
    note: `${m.cores} cores shared by the load generator, the echo service and the gateway workers`,
    runs: Object.fromEntries(runs),
  };
  writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(`${m.cores} cores: 1 worker ${one.toFixed(0)} req/s, 2 workers ${two.toFixed(0)} req/s, ratio ${(two / one).toFixed(2)}\nResults: ${out}\n`);
} finally {
  for (const t of targets) for (const child of [...t.children].reverse()) await child.stop();
  rmSync(dir, { recursive: true, force: true });
}
