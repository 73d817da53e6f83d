/**
 * `npm start`: the gateway with the config named by GATEWAY_CONFIG, or the zero-setup demo
 * (in-memory store, demo account and key, demo services launched and connected over gRPC).
 */
import { fileURLToPath } from 'node:url';
import { loadConfigFile } from '../config/load.js';
import { BootError } from '../errors.js';
import { createGateway } from '../gateway.js';
import { createLogger } from '../logger.js';
import { expectLaunchedServices } from './expect-launched.js';
import { launchServices } from './launcher.js';

const DEMO_CONFIG = fileURLToPath(new URL('../../examples/demo/gateway.yaml', import.meta.url));
export const DEFAULT_DEMO_API_KEY = 'demo-api-key-0123456789';
export const DEFAULT_DEMO_SERVICE_TOKEN = 'demo-service-token-0123';

async function main(): Promise<void> {
  const logger = createLogger();
  const configPath = process.env.GATEWAY_CONFIG ?? DEMO_CONFIG;
  const demo = !process.env.GATEWAY_CONFIG;
  const config = loadConfigFile(configPath);
  const gateway = await createGateway(config, { logger });
  const { httpUrl, grpcAddress } = await gateway.start();
  const services = launchServices(config.launch, grpcAddress, logger, expectLaunchedServices(gateway));

  const lines = [
    '',
    `Gateway ready (config: ${configPath}, store: ${config.store.kind})`,
    `  HTTP  ${httpUrl}`,
    `  gRPC  ${grpcAddress}`,
  ];
  if (demo) {
    lines.push(
      `  Demo API key:        ${process.env.DEMO_API_KEY ?? DEFAULT_DEMO_API_KEY}   (set DEMO_API_KEY to change it)`,
      `  demo/external token: ${process.env.DEMO_SERVICE_TOKEN ?? DEFAULT_DEMO_SERVICE_TOKEN}   (set DEMO_SERVICE_TOKEN to change it)`,
      `  Try: curl -s ${httpUrl}/api/adapters/chatapi/chat/completions -H 'Authorization: Bearer ${process.env.DEMO_API_KEY ?? DEFAULT_DEMO_API_KEY}' \\`,
      `         -H 'Content-Type: application/json' -d '{"model":"demo/echo","messages":[{"role":"user","content":"hello"}]}'`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n\n`);

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    logger.info({ signal, drainTimeoutMs: config.gate.drainTimeoutMs }, 'shutting down: draining');
    // The gateway drains first (requests in flight may be on launched services), then they stop.
    await gateway.close();
    await services.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

main().catch((err: unknown) => {
  if (err instanceof BootError) process.stderr.write(`Gateway did not start:\n${err.message}\n`);
  else process.stderr.write(`Gateway did not start: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
