/**
 * One gateway worker, forked by core/bin/workers.ts: a whole gateway (plugins, store, Gate) that
 * shares the HTTP and gRPC ports with its siblings and listens on a gRPC port of its own. It tells
 * the primary when it listens, and drains on SIGTERM like a single gateway.
 */
import type { GatewayConfig } from '../config/types.js';
import type { WorkerTopology } from '../gate/cluster-update.js';
import { createGateway, type GatewayAddresses } from '../gateway.js';
import type { Logger } from '../observe/logger.js';

/** How the primary hands a worker its place (an environment variable survives a restart as is). */
export const WORKER_ROLE_ENV = 'GATEWAY_WORKER_ROLE';

/** What a worker sends the primary over the cluster IPC channel once it listens. */
export interface WorkerListening {
  type: 'gateway-worker-listening';
  index: number;
  addresses: GatewayAddresses;
}

export function isWorkerListening(message: unknown): message is WorkerListening {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === 'gateway-worker-listening';
}

export function workerRole(env: NodeJS.ProcessEnv = process.env): WorkerTopology | undefined {
  const text = env[WORKER_ROLE_ENV];
  return text ? (JSON.parse(text) as WorkerTopology) : undefined;
}

export async function runWorker(config: GatewayConfig, role: WorkerTopology, logger: Logger): Promise<void> {
  const log = logger.child({ worker: role.index });
  const gateway = await createGateway(config, { logger: log, worker: role });
  const addresses = await gateway.start();
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    log.info({ signal, drainTimeoutMs: config.gate.drainTimeoutMs }, 'worker shutting down: draining');
    await gateway.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  // Ctrl+C reaches every process of the group; the primary waits for the workers' drain.
  process.on('SIGINT', () => void shutdown('SIGINT'));
  const message: WorkerListening = { type: 'gateway-worker-listening', index: role.index, addresses };
  process.send?.(message);
}
