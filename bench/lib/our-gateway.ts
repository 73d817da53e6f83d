/**
 * Our gateway and its echo service as the bench starts them, in one place for the scenarios
 * (bench/lib/systems.ts), bench:costs (bench/feature-cost.ts) and the workers scenario: the compiled gateway
 * (bench/servers/gateway.mjs, dist/ built first when stale) with the bench config and some extras,
 * and the demo echo service dialling it.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BENCH_METRICS_TOKEN, BENCH_USERSPACE_KEY, TOKENS, benchConfigInput, gatewayHeaders } from './config.js';
import { startCommand } from '../../scripts/start-command.mjs';
import { ROOT, ensureBuilt, startChild, waitFor, type Child } from './procs.js';

/** npm start's Node flags (the heap's full-collection floor), which our gateway and the services it launches get. */
const START_FLAGS = startCommand().nodeFlags;

/** What a bench gateway adds to the bench config: plugins (`metrics`), and tracing to an OTLP/HTTP URL. */
export interface GatewayExtras {
  /** The mock upstream that `bench/direct` (the upstream connector) calls. */
  upstreamUrl?: string;
  plugins?: string[];
  tracing?: { otlpEndpoint: string; sampleRatio: number };
  /**
   * User-space keys and budgets on (row 3c): the `user-space` plugin, this many stored keys seeded at
   * start (bench/servers/gateway.mjs), budgets on the account and the measured key, prices on the echo service.
   */
  userSpaceKeys?: number;
  /** `gate.bulkLaneBytes` (`--bulk-lane-bytes`); undefined: the gateway's default. */
  bulkLaneBytes?: number;
}

/** Budgets far above what a run spends: checked and debited on every request, never refusing. */
const UNSPENT = [
  { unit: 'tokens', limit: 1e12, period: 'day' },
  { unit: 'money', limit: 1e9, period: 'month' },
];

/** The bench config with user-space keys and budgets on (row 3c). */
function withUserSpace(input: Record<string, any>): void {
  input.plugins.enabled.push('user-space');
  // Its own embedded store, the default home (the memory store's inserts slow down with size: 100,000
  // would take minutes), apart from the other gateways'.
  input.store = { kind: 'embedded', dataDir: mkdtempSync(join(tmpdir(), 'bench-userspace-')) };
  input.accounts[0].budgets = UNSPENT;
  const echo = input.services.find((s: { name: string }) => s.name === 'echo');
  echo.prices = { input: 0.15, output: 0.6, currency: 'USD' };
}

export interface StartOptions {
  nodeFlags?: string[];
  /** How long it may take to start (and, for the echo service, to be routed to). */
  timeoutMs?: number;
  /** The echo service only: instances in its one process (bench/servers/echo-instances.ts), default 1. */
  instances?: number;
}

/** Starts our gateway in its own process: the bench config with the extras, as JSON in its environment. */
export function startOurGateway(name: string, extras: GatewayExtras = {}, options: StartOptions = {}): Promise<Child> {
  ensureBuilt();
  const input = benchConfigInput(extras.upstreamUrl) as {
    plugins: { enabled: string[]; options?: Record<string, unknown> };
    tracing?: GatewayExtras['tracing'];
    gate?: Record<string, unknown>;
  };
  input.plugins.enabled.push(...(extras.plugins ?? []));
  if (extras.plugins?.includes('metrics'))
    input.plugins.options = { ...input.plugins.options, metrics: { bearerToken: BENCH_METRICS_TOKEN } };
  if (extras.tracing) input.tracing = extras.tracing;
  if (extras.userSpaceKeys) withUserSpace(input);
  if (extras.bulkLaneBytes !== undefined) input.gate = { ...input.gate, bulkLaneBytes: extras.bulkLaneBytes };
  return startChild(name, {
    script: 'bench/servers/gateway.mjs',
    env: {
      BENCH_GATEWAY_CONFIG: JSON.stringify(input),
      BENCH_LOOP_DELAY: '1',
      ...(extras.userSpaceKeys
        ? { BENCH_USERSPACE_KEYS: String(extras.userSpaceKeys), BENCH_USERSPACE_KEY, BENCH_USERSPACE_BUDGETS: JSON.stringify(UNSPENT) }
        : {}),
    },
    // npm start's flags, then the bench's own.
    nodeFlags: [...START_FLAGS, ...(options.nodeFlags ?? [])],
    waitReady: true,
    readyTimeoutMs: options.timeoutMs,
  });
}

/** Waits until the gateway's `/health` lists a serving instance of `bench/<service>`. */
export function waitForService(gateway: Child, service: string, timeoutMs?: number, instances = 1): Promise<void> {
  const httpUrl = gateway.ready.httpUrl as string;
  return waitFor(
    `bench/${service} on ${gateway.name}`,
    async () => {
      // Instance counts are shown to a caller with a key only.
      const health = (await (await fetch(`${httpUrl}/health`, { headers: gatewayHeaders() })).json()) as {
        instances?: Record<string, number>;
      };
      return (health.instances?.[`bench/${service}`] ?? 0) >= instances;
    },
    timeoutMs,
  );
}

/**
 * The demo echo service (examples/echo-service/main.ts, unchanged) dialling the gRPC address
 * `grpcAddress`, with the heap flags `npm start` gives the services it launches (core/bin/launcher.ts);
 * with `instances` over 1, that many of it in one process (bench/servers/echo-instances.ts).
 */
export function startEcho(name: string, grpcAddress: string, nodeFlags?: string[], instances = 1): Promise<Child> {
  // The demo service as it is, plus the event loop's delay on request (bench/lib/loop-delay.mjs).
  const flags = [...START_FLAGS, '--import', `${ROOT}bench/lib/loop-delay.mjs`, ...(nodeFlags ?? [])];
  return startChild(name, {
    script: instances > 1 ? 'bench/servers/echo-instances.ts' : 'examples/echo-service/main.ts',
    nodeFlags: flags,
    env: {
      PLATFORM_GRPC_HOST: grpcAddress,
      PLATFORM_SERVICE_TOKEN: TOKENS.echo,
      ...(instances > 1 ? { BENCH_ECHO_INSTANCES: String(instances) } : {}),
    },
  });
}

/** The echo service dialling `gateway`, once the gateway routes to it. */
export async function startEchoFor(name: string, gateway: Child, options: StartOptions = {}): Promise<Child> {
  const child = await startEcho(name, gateway.ready.grpcAddress as string, options.nodeFlags, options.instances);
  await waitForService(gateway, 'echo', options.timeoutMs, options.instances);
  return child;
}
