import { buildConfig } from '../../core/config/load.js';
import { createGateway, type Gateway, type GatewayOptions } from '../../core/gateway.js';
import { createLogger, silentLogger } from '../../core/observe/logger.js';

export const TEST_KEY = 'test-key-all-permissions-000001';
export const READ_ONLY_KEY = 'test-key-read-data-only-0000001';
export const OTHER_ACCOUNT_KEY = 'test-key-other-account-00000001';
export const BLOCKED_KEY = 'test-key-blocked-account-000001';
export const ECHO_TOKEN = 'echo-service-token-0001';
export const PRIVATE_TOKEN = 'private-service-token-01';

/** A small config: two accounts, keys of each kind, a public and a private service. */
export function testConfigInput(overrides: Record<string, unknown> = {}): Record<string, any> {
  return {
    server: { httpPort: 0, grpcPort: 0 },
    gate: { heartbeatIntervalMs: 200, defaultTimeoutSec: 10 },
    accounts: [
      { id: 1, name: 'demo', requestsPerSecond: 1000 },
      { id: 2, name: 'other', requestsPerSecond: 1000 },
      { id: 3, name: 'blocked', blocked: true },
    ],
    apiKeys: [
      { name: 'all', account: 'demo', key: TEST_KEY, permissions: ['MODEL_REQUESTS', 'READ_DATA', 'MODIFY_DATA'] },
      { name: 'read-only', account: 'demo', key: READ_ONLY_KEY, permissions: ['READ_DATA'] },
      { name: 'other', account: 'other', key: OTHER_ACCOUNT_KEY, permissions: ['MODEL_REQUESTS', 'READ_DATA', 'MODIFY_DATA'] },
      { name: 'blocked', account: 'blocked', key: BLOCKED_KEY, permissions: ['MODEL_REQUESTS', 'READ_DATA', 'MODIFY_DATA'] },
    ],
    services: [
      { id: 10, name: 'echo', account: 'demo', public: true, connectionTokens: [{ token: ECHO_TOKEN }] },
      { id: 11, name: 'private', account: 'demo', public: false, connectionTokens: [{ token: PRIVATE_TOKEN }] },
    ],
    ...overrides,
  };
}

export interface TestGateway {
  gateway: Gateway;
  httpUrl: string;
  grpcAddress: string;
  close(): Promise<void>;
}

/** Builds and starts a gateway on free loopback ports; logs only when LOG_LEVEL is set. */
export async function startTestGateway(
  input: Record<string, unknown> = testConfigInput(),
  options: GatewayOptions = {},
): Promise<TestGateway> {
  // The memory store unless the test names one: the embedded default would share one database file
  // (`./.data`) among every test gateway. Tests of the embedded store give it a dataDir of their own.
  const store = (input.store ?? {}) as Record<string, unknown>;
  if (store.kind === undefined) input = { ...input, store: { ...store, kind: 'memory' } };
  const config = buildConfig(input, { env: {} });
  const logger = process.env.LOG_LEVEL ? createLogger() : silentLogger();
  const gateway = await createGateway(config, { logger, ...options });
  const { httpUrl, grpcAddress } = await gateway.start();
  return { gateway, httpUrl, grpcAddress, close: () => gateway.close() };
}

/** Polls `check` until it returns true (or throws after `timeoutMs`). For "eventually", not timing. */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 5000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}
