/**
 * `server.workers` above 1: this process becomes a node:cluster primary that serves nothing itself.
 * It forks one gateway per worker (core/bin/worker.ts), which share the HTTP and gRPC ports (the
 * primary accepts and hands connections out round robin) and each listen on a gRPC port of their
 * own, so that a service told every worker's port holds one stream per worker. A worker that dies
 * is forked again with the same place, after a back-off that grows while it keeps dying. SIGTERM
 * drains every worker (each as a single gateway would) before the primary exits.
 */
import cluster, { type Worker } from 'node:cluster';
import { createServer, type Server } from 'node:net';
import type { GatewayConfig } from '../config/types.js';
import { workerPortBase } from '../config/workers.js';
import type { WorkerTopology } from '../gate/cluster-update.js';
import type { GatewayAddresses } from '../gateway.js';
import type { Logger } from '../observe/logger.js';
import { serveWorkersMetrics } from '../observe/cluster-metrics.js';
import { isWorkerListening, WORKER_ROLE_ENV } from './worker.js';

/** Restart delays: doubling from the first, capped; a worker that stayed up this long starts over. */
const RESTART_FIRST_MS = 500;
const RESTART_MAX_MS = 30_000;
const RESTART_RESET_AFTER_MS = 60_000;
/** After the drain time, how long the primary still waits for a worker before killing it. */
const EXIT_GRACE_MS = 5_000;

export interface RunningWorkers {
  /** Worker 0's addresses: the shared HTTP and gRPC ports. */
  addresses: GatewayAddresses;
  /** Each worker's own gRPC address. */
  workerGrpcAddresses: string[];
  /** Drains every worker and waits for them to exit; no restarts after it is called. */
  stop(): Promise<void>;
}

/** The shared gRPC port and every worker's own one; 0s become free ports now, before any fork. */
export async function workerPorts(config: GatewayConfig): Promise<{ sharedPort: number; ownPorts: number[] }> {
  const { host, grpcPort, workers } = config.server;
  const base = workerPortBase(config.server);
  // All free ports are held open together, so that they are distinct.
  const wanted = (grpcPort ? 0 : 1) + (base ? 0 : workers);
  const free = await freePorts(host, wanted);
  const sharedPort = grpcPort || free.shift()!;
  const ownPorts = base ? Array.from({ length: workers }, (_, i) => base + i) : free;
  return { sharedPort, ownPorts };
}

export async function startWorkers(config: GatewayConfig, logger: Logger): Promise<RunningWorkers> {
  const { sharedPort, ownPorts } = await workerPorts(config);
  const count = config.server.workers;
  const log = logger.child({ component: 'workers' });
  const byIndex = new Map<number, Worker>();
  const crashes = new Map<number, { delayMs: number; startedAt: number }>();
  let stopping = false;
  let booted = false;
  // A scrape reaches one worker; it asks here for every worker's figures (core/observe/cluster-metrics.ts).
  serveWorkersMetrics();

  const fork = (index: number): Worker => {
    const role: WorkerTopology = { index, sharedPort, ownPorts };
    const worker = cluster.fork({ [WORKER_ROLE_ENV]: JSON.stringify(role) });
    byIndex.set(index, worker);
    crashes.set(index, { delayMs: crashes.get(index)?.delayMs ?? 0, startedAt: Date.now() });
    worker.on('exit', (code, signal) => {
      if (byIndex.get(index) === worker) byIndex.delete(index);
      if (stopping || !booted) return;
      const last = crashes.get(index)!;
      // A worker that ran a while before dying starts the back-off over; one dying at once backs off more.
      const delayMs =
        Date.now() - last.startedAt > RESTART_RESET_AFTER_MS
          ? RESTART_FIRST_MS
          : Math.min(RESTART_MAX_MS, Math.max(RESTART_FIRST_MS, last.delayMs * 2));
      crashes.set(index, { ...last, delayMs });
      log.warn({ worker: index, pid: worker.process.pid, code, signal, restartInMs: delayMs }, 'gateway worker exited; restarting it');
      setTimeout(() => {
        if (!stopping) fork(index);
      }, delayMs);
    });
    return worker;
  };

  const listening = new Map<number, GatewayAddresses>();
  await new Promise<void>((resolve, reject) => {
    for (let index = 0; index < count; index++) {
      const worker = fork(index);
      const onMessage = (message: unknown) => {
        if (!isWorkerListening(message)) return;
        // Only this listener: node:cluster's own re-emits messages on `cluster` (metrics use that).
        worker.off('message', onMessage);
        listening.set(message.index, message.addresses);
        if (listening.size === count) resolve();
      };
      worker.on('message', onMessage);
      // A worker that cannot boot said why on stderr; the others are no use without it.
      worker.once('exit', (code) => {
        if (!booted) reject(new Error(`gateway worker ${index} exited with code ${code} before it listened (its error is above)`));
      });
    }
  }).catch(async (err: unknown) => {
    stopping = true;
    await stopAll(byIndex, 0);
    throw err;
  });
  booted = true;
  log.info({ workers: count, sharedGrpcPort: sharedPort, ownGrpcPorts: ownPorts }, 'gateway workers listening');

  return {
    addresses: listening.get(0)!,
    workerGrpcAddresses: ownPorts.map((port) => `${config.server.host}:${port}`),
    async stop() {
      stopping = true;
      await stopAll(byIndex, config.gate.drainTimeoutMs + EXIT_GRACE_MS);
    },
  };
}

/** SIGTERM to each worker (it drains), then SIGKILL to any still there after `graceMs`. */
async function stopAll(workers: Map<number, Worker>, graceMs: number): Promise<void> {
  await Promise.all(
    [...workers.values()].map(
      (worker) =>
        new Promise<void>((resolve) => {
          if (worker.isDead()) return resolve();
          const kill = setTimeout(() => worker.process.kill('SIGKILL'), graceMs);
          worker.once('exit', () => {
            clearTimeout(kill);
            resolve();
          });
          worker.process.kill('SIGTERM');
        }),
    ),
  );
}

async function freePorts(host: string, count: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const server = createServer();
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, host, resolve);
      });
    }
    return servers.map((s) => (s.address() as { port: number }).port);
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  }
}
