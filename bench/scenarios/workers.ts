/**
 * The workers scenario (#18 "Workers"): what `server.workers` buys, gateway only. Two gateways run
 * side by side as `npm start` runs them (the compiled dist/core/bin/start.js with a config file),
 * one with 1 worker and one with 2, each with its own echo service dialling its shared gRPC port
 * (the cluster update takes it to every worker). The chat adapter is saturated on each in turn,
 * alternating within every round; each autocannon connection stays with the worker that accepted
 * it, so the connections spread over the workers. The ratio is taken within each round.
 *
 * The load generator (the harness process), the echo service and the workers share the machine's
 * cores: with few cores the figure is bound by that, not by the gateway, and the result says how
 * many there were.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchConfigInput, gatewayChatLoad, gatewayHeaders } from '../lib/config.js';
import { startEcho } from '../lib/our-gateway.js';
import { saturate, type LoadResult } from '../lib/load.js';
import { machine } from '../lib/machine.js';
import { ensureBuilt, freePort, startChild, waitFor, type Child } from '../lib/procs.js';
import { spread, type Spread } from '../lib/stats.js';
import { startCommand } from '../../scripts/start-command.mjs';

export interface WorkersOptions {
  rounds: number;
  durationSec: number;
  warmupSec: number;
  connections: number;
  log: (line: string) => void;
}

/** One saturation run, with the CPU its gateway (primary and workers) and echo service spent per answer. */
export interface WorkersRun extends LoadResult {
  cpuUsPerRequest: { gateway: number; echo: number };
}

export interface WorkersResult {
  settings: Omit<WorkersOptions, 'log'> & { path: string };
  /** The machine's cores, shared by the load generator, the echo services and the gateways. */
  cores: number;
  runs: { oneWorker: WorkersRun[]; twoWorkers: WorkersRun[] };
  summary: {
    oneWorkerRps: Spread;
    twoWorkersRps: Spread;
    /** Two workers' req/s ÷ one worker's, within each round. */
    ratio: Spread;
    gatewayCpuUs: { oneWorker: Spread; twoWorkers: Spread };
  };
}

/** Cores for a fair comparison: one per worker, one for the load generator, one for the echo service. */
export const FAIR_WORKER_CORES = 4;

/** The compiled entry of `npm start` and its flags, so the workers fork without a TypeScript loader as in production. */
const START = startCommand();

interface Gateway {
  workers: number;
  url: string;
  gateway: Child;
  echo: Child;
}

/** /health over a connection of its own (a new connection may go to another worker). */
function health(url: string): Promise<{ worker: string; echo: number }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/health`, { agent: false, headers: gatewayHeaders() }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => {
        try {
          const body = JSON.parse(text) as { instances?: Record<string, number> };
          resolve({ worker: String(res.headers['x-gateway-worker'] ?? '0'), echo: body.instances?.['bench/echo'] ?? 0 });
        } catch (err) {
          reject(err as Error);
        }
      });
    });
    // A worker still booting may accept and not answer: give up on this poll, waitFor polls again.
    req.setTimeout(2000, () => req.destroy(new Error('no answer from /health')));
    req.on('error', reject);
    req.end();
  });
}

/** Starts a gateway with `workers` and its echo service; each child goes into `children` once started, to be stopped. */
async function start(workers: number, dir: string, children: Child[]): Promise<Gateway> {
  // The bench config without `fitting`, whose state would be split over workers on the memory store
  // (the gateway refuses that): the rest of the plugins are stateless once chatapi stores no responses.
  const input = benchConfigInput() as {
    server: Record<string, unknown>;
    plugins: { enabled: string[]; options?: Record<string, unknown> };
  };
  input.plugins.enabled = input.plugins.enabled.filter((name) => name !== 'fitting');
  // Nor stored Responses (chatapi's other state), which this scenario does not call.
  input.plugins.options = { ...input.plugins.options, chatapi: { responses: { store: false } } };
  const [httpPort, grpcPort] = [await freePort(), await freePort()];
  input.server = { ...input.server, httpPort, grpcPort, workers, workerGrpcPort: 0 };
  const configPath = join(dir, `gateway-${workers}.json`);
  writeFileSync(configPath, JSON.stringify(input));
  const url = `http://127.0.0.1:${httpPort}`;
  const gateway = await startChild(`gateway-${workers}w`, {
    script: START.entry,
    nodeFlags: START.nodeFlags,
    env: { GATEWAY_CONFIG: configPath },
  });
  children.push(gateway);
  await waitFor(`gateway with ${workers} workers`, async () => (await fetch(`${url}/health/ready`)).ok, 180_000);
  const echo = await startEcho(`echo-${workers}w`, `127.0.0.1:${grpcPort}`);
  children.push(echo);
  // Every worker must route to the service before the load starts, or the first answers are 502s.
  const seen = new Map<string, number>();
  await waitFor(
    `the echo service on every worker of ${workers}`,
    async () => {
      const { worker, echo: instances } = await health(url);
      seen.set(worker, instances);
      return seen.size === workers && [...seen.values()].every((n) => n > 0);
    },
    180_000,
  );
  return { workers, url, gateway, echo };
}

async function measure(g: Gateway, options: WorkersOptions): Promise<WorkersRun> {
  const cpuBefore = [g.gateway.cpuMs(), g.echo.cpuMs()] as const;
  const result = await saturate(gatewayChatLoad(g.url), { connections: options.connections, durationSec: options.durationSec });
  const served = Math.max(1, result.ok);
  const cpuUsPerRequest = {
    gateway: ((g.gateway.cpuMs() - cpuBefore[0]) * 1000) / served,
    echo: ((g.echo.cpuMs() - cpuBefore[1]) * 1000) / served,
  };
  return { ...result, cpuUsPerRequest };
}

export async function runWorkers(options: WorkersOptions): Promise<WorkersResult> {
  const { log, ...settings } = options;
  ensureBuilt();
  const dir = mkdtempSync(join(tmpdir(), 'bench-workers-'));
  const children: Child[] = [];
  const gateways: Gateway[] = [];
  const runs = { oneWorker: [] as WorkersRun[], twoWorkers: [] as WorkersRun[] };
  try {
    gateways.push(await start(1, dir, children), await start(2, dir, children));
    // Warm-up of each: JIT in every worker, keep-alive connections.
    if (options.warmupSec > 0)
      for (const g of gateways)
        await saturate(gatewayChatLoad(g.url), { connections: options.connections, durationSec: options.warmupSec });
    for (let round = 0; round < options.rounds; round++) {
      // Alternate which goes first, so neither always runs on the warmer or the busier machine.
      for (const g of round % 2 ? [...gateways].reverse() : gateways) {
        const run = await measure(g, options);
        (g.workers === 1 ? runs.oneWorker : runs.twoWorkers).push(run);
        log(
          `  workers round ${round + 1}, ${g.workers} worker(s): ${run.rps.toFixed(0)} req/s, p99 ${run.latencyMs.p99.toFixed(2)} ms, non-2xx ${run.non2xx}, ` +
            `gateway CPU ${run.cpuUsPerRequest.gateway.toFixed(0)} µs/request`,
        );
      }
    }
  } finally {
    // Services before their gateway, so none is left redialling a port that is gone.
    for (const child of children.reverse()) await child.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return {
    settings: { ...settings, path: 'chat adapter → echo service (gRPC), memory store, stateless plugins' },
    cores: machine().cores,
    runs,
    summary: {
      oneWorkerRps: spread(runs.oneWorker.map((r) => r.rps)),
      twoWorkersRps: spread(runs.twoWorkers.map((r) => r.rps)),
      ratio: spread(runs.twoWorkers.map((r, i) => r.rps / runs.oneWorker[i]!.rps)),
      gatewayCpuUs: {
        oneWorker: spread(runs.oneWorker.map((r) => r.cpuUsPerRequest.gateway)),
        twoWorkers: spread(runs.twoWorkers.map((r) => r.cpuUsPerRequest.gateway)),
      },
    },
  };
}
