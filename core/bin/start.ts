/**
 * `npm start`: the gateway with the config named by GATEWAY_CONFIG, or the zero-setup demo
 * (in-memory store, demo account and key, demo services launched and connected over gRPC).
 * `npm start -- --check` checks the config (and connects to its store) without starting anything.
 */
import cluster from 'node:cluster';
import { relative, resolve } from 'node:path';
import { loadConfigFile } from '../config/load.js';
import { BootError } from '../errors.js';
import { createGateway } from '../gateway.js';
import { createLogger, type Logger } from '../observe/logger.js';
import type { GatewayConfig } from '../config/types.js';
import { bannerLines, launchedWithoutWaiting, waitForLaunched, type LaunchReport } from './banner.js';
import { expectLaunchedServices } from './expect-launched.js';
import { DEMO_CONFIG } from './init-config.js';
import { launchServices } from './launcher.js';
import { runWorker, workerRole } from './worker.js';
import { startWorkers } from './workers.js';

export const DEFAULT_DEMO_API_KEY = 'demo-api-key-0123456789';
export const DEFAULT_DEMO_SERVICE_TOKEN = 'demo-service-token-0123';
export const DEFAULT_DEMO_METRICS_TOKEN = 'demo-metrics-token-0123456789';
/** The demo's person (examples/demo/gateway.yaml `userSpace.users`), printed in the banner with its password. */
export const DEMO_EMAIL = 'demo@example.com';
export const DEFAULT_DEMO_PASSWORD = 'demo-password-123';
/** How long the banner waits for launched services to connect (LAUNCH_WAIT_MS). */
const LAUNCH_WAIT_MS = Number(process.env.LAUNCH_WAIT_MS ?? 120_000);

async function main(): Promise<void> {
  const logger = createLogger();
  // npm runs scripts from the package folder; a relative GATEWAY_CONFIG means the caller's folder (INIT_CWD).
  const configPath = process.env.GATEWAY_CONFIG ? resolve(process.env.INIT_CWD ?? process.cwd(), process.env.GATEWAY_CONFIG) : DEMO_CONFIG;
  const demo = !process.env.GATEWAY_CONFIG;
  const config = loadConfigFile(configPath);
  const role = workerRole();
  if (cluster.isWorker && role) return runWorker(config, role, logger);
  const started =
    config.server.workers > 1 && !process.argv.includes('--check')
      ? await startAsWorkers(config, logger)
      : await startSingle(config, logger, configPath);
  if (!started) return;
  const { httpUrl, grpcAddress, launch } = started;
  const shownPath = relative(process.cwd(), configPath).startsWith('..') ? configPath : relative(process.cwd(), configPath);
  process.stdout.write(
    `${bannerLines({
      httpUrl,
      grpcAddress,
      configPath: shownPath,
      storeKind: config.store.kind,
      ...(started.workers ? { workers: started.workers } : {}),
      demo: demo
        ? {
            apiKey: process.env.DEMO_API_KEY ?? DEFAULT_DEMO_API_KEY,
            serviceToken: process.env.DEMO_SERVICE_TOKEN ?? DEFAULT_DEMO_SERVICE_TOKEN,
            metricsToken: process.env.DEMO_METRICS_TOKEN ?? DEFAULT_DEMO_METRICS_TOKEN,
            signIn: { email: DEMO_EMAIL, password: process.env.DEMO_PASSWORD ?? DEFAULT_DEMO_PASSWORD },
          }
        : undefined,
      launch,
    }).join('\n')}\n`,
  );
}

interface Started {
  httpUrl: string;
  grpcAddress: string;
  launch: LaunchReport;
  /** Each worker's own gRPC address, with `server.workers` above 1. */
  workers?: string[];
}

/** One gateway in this process (`server.workers: 1`, the default); undefined after `--check`. */
async function startSingle(config: GatewayConfig, logger: Logger, configPath: string): Promise<Started | undefined> {
  const gateway = await createGateway(config, { logger });
  if (process.argv.includes('--check')) {
    // Config, registry, plugins and their options, store connection: everything short of listening.
    await gateway.close();
    process.stdout.write(
      `Config OK: ${process.env.GATEWAY_CONFIG ?? configPath} (${config.services.length} services, ${gateway.plugins.length} plugins, store ${config.store.kind})\n`,
    );
    return undefined;
  }
  const { httpUrl, grpcAddress } = await gateway.start();
  const services = launchServices(config.launch, grpcAddress, logger, expectLaunchedServices(gateway));
  onStopSignal(logger, config, async () => {
    // The gateway drains first (requests in flight may be on launched services), then they stop.
    services.shuttingDown();
    await gateway.close();
    await services.stop();
  });
  const launch = await waitForLaunched(config, gateway.gate, services, config.launch.length ? LAUNCH_WAIT_MS : 0);
  return { httpUrl, grpcAddress, launch };
}

/**
 * `server.workers` gateways in forked processes (core/bin/workers.ts). Launched services dial the
 * shared gRPC port and are moved to every worker by the cluster update; the banner does not wait
 * for them (no worker's Gate is in this process).
 */
async function startAsWorkers(config: GatewayConfig, logger: Logger): Promise<Started> {
  const workers = await startWorkers(config, logger);
  const { httpUrl, grpcAddress } = workers.addresses;
  const services = launchServices(config.launch, grpcAddress, logger);
  onStopSignal(logger, config, async () => {
    services.shuttingDown();
    await workers.stop();
    await services.stop();
  });
  return { httpUrl, grpcAddress, launch: launchedWithoutWaiting(config, services), workers: workers.workerGrpcAddresses };
}

function onStopSignal(logger: Logger, config: GatewayConfig, stop: () => Promise<void>): void {
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    logger.info({ signal, drainTimeoutMs: config.gate.drainTimeoutMs }, 'shutting down: draining');
    await stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

/** A boot failure is one coded line (or one list): the operator fixes a setting, not our code. */
main().catch((err: unknown) => {
  if (err instanceof BootError) process.stderr.write(`Gateway did not start: ${err.message}\n`);
  else if (process.env.LOG_LEVEL === 'debug' || process.env.LOG_LEVEL === 'trace')
    process.stderr.write(`Gateway did not start: ${(err as Error).stack ?? String(err)}\n`);
  else process.stderr.write(`Gateway did not start: ${(err as Error).message ?? String(err)} (LOG_LEVEL=debug shows where)\n`);
  process.exit(1);
});
