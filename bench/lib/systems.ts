/**
 * The processes the scenarios run against, started on first use and stopped at the end: the fixed
 * server (ceiling and mock upstream), the peer gateway, our gateway with its services, the gRPC
 * ceiling and the slow streaming service. Every one is a child process on loopback.
 */
import { mkdirSync } from 'node:fs';
import { BENCH_USERSPACE_KEYS, TOKENS, fixedAnswer } from './config.js';
import { startOtlpSink, type OtlpSink } from './otlp-sink.js';
import { startEchoFor, startOurGateway, waitForService } from './our-gateway.js';
import { ROOT, freePort, startChild, waitFor, type Child } from './procs.js';
import { startLiteLlm } from '../peers/litellm.js';

export interface SystemsOptions {
  /** Directory for `--cpu-prof` output of our gateway; undefined = no profiling. */
  profileDir?: string;
  /** Further node flags for our gateway and services (`--perf-basic-prof` for bench/oncpu.ts). */
  nodeFlags?: string[];
  /** Stored keys of row 3c's gateway (default BENCH_USERSPACE_KEYS; the smoke test seeds fewer). */
  userSpaceKeys?: number;
  /** Instances of the echo service of our gateway, in its one process (`--echo-instances`, default 1). */
  echoInstances?: number;
  /** Our gateways' `gate.bulkLaneBytes` (`--bulk-lane-bytes`); undefined: the gateway's default. */
  bulkLaneBytes?: number;
  log: (line: string) => void;
}

export const PORTKEY_ENTRY = 'node_modules/@portkey-ai/gateway/build/start-server.js';

export class Systems {
  readonly body = fixedAnswer();
  readonly #options: SystemsOptions;
  readonly #started = new Map<string, Promise<Child>>();

  constructor(options: SystemsOptions) {
    this.#options = options;
  }

  #once(name: string, start: () => Promise<Child>): Promise<Child> {
    let child = this.#started.get(name);
    if (!child) {
      this.#options.log(`  starting ${name}`);
      this.#started.set(name, (child = start()));
    }
    return child;
  }

  /** Ceiling and mock upstream: answers the fixed body to anything. */
  mock(): Promise<Child> {
    return this.#once('fixed-server', () =>
      startChild('fixed-server', { script: 'bench/servers/fixed.ts', env: { BENCH_BODY: this.body }, waitReady: true }),
    );
  }

  async mockUrl(): Promise<string> {
    return `http://127.0.0.1:${(await this.mock()).ready.port as number}`;
  }

  /** The peer: Portkey's gateway (its own CLI; no host flag, it listens on all interfaces). */
  portkey(): Promise<Child> {
    return this.#once('portkey', async () => {
      const port = await freePort();
      const child = await startChild('portkey', { script: `${ROOT}${PORTKEY_ENTRY}`, args: [`--port=${port}`, '--headless'] });
      await waitFor('portkey', async () => (await fetch(`http://127.0.0.1:${port}/`)).ok);
      return Object.assign(child, { ready: { port } });
    });
  }

  /**
   * The second peer: LiteLLM's proxy (bench/peers/litellm.ts) with `bench/echo` on the mock
   * upstream (installed beforehand: npm run bench, .ci/run). Its `ready` has the port and what it ran with (LiteLlmSettings).
   */
  litellm(): Promise<Child> {
    return this.#litellm('litellm', async () => ({ 'bench/echo': await this.mockUrl() }));
  }

  /** LiteLLM again, with `bench/ticker` on the streaming ticker's direct SSE port: the peer as a streaming path. */
  litellmTicker(directPort: number): Promise<Child> {
    return this.#litellm('litellm-ticker', async () => ({ 'bench/ticker': `http://127.0.0.1:${directPort}` }));
  }

  /**
   * Smoke mode: one LiteLLM serving both `bench/echo` and `bench/ticker`, as both `litellm` and
   * `litellm-ticker` (stopping either stops it).
   */
  litellmForBoth(directPort: number): Promise<Child> {
    const child = this.#litellm('litellm', async () => ({
      'bench/echo': await this.mockUrl(),
      'bench/ticker': `http://127.0.0.1:${directPort}`,
    }));
    this.#started.set('litellm-ticker', child);
    return child;
  }

  #litellm(name: string, models: () => Promise<Record<string, string>>): Promise<Child> {
    return this.#once(name, async () => {
      const { child, port, settings } = await startLiteLlm(await models());
      return Object.assign(child, { ready: { port, settings } });
    });
  }

  async litellmUrl(): Promise<string> {
    return `http://127.0.0.1:${(await this.litellm()).ready.port as number}`;
  }

  async portkeyUrl(): Promise<string> {
    const child = await this.portkey();
    return `http://127.0.0.1:${child.ready.port as number}`;
  }

  /** Node flags of our processes: the extra ones, and `--cpu-prof` into `<profileDir>/<name>` when profiling. */
  #ourNodeFlags(name: string): string[] {
    const extra = this.#options.nodeFlags ?? [];
    if (!this.#options.profileDir) return extra;
    const dir = `${this.#options.profileDir}/${name}`;
    mkdirSync(dir, { recursive: true });
    return ['--cpu-prof', `--cpu-prof-dir=${dir}`, ...extra];
  }

  /** Our gateway (bench/servers/gateway.mjs, compiled), with --expose-gc for heap readings after a collection. */
  gateway(): Promise<Child> {
    return this.#once('gateway', async () =>
      startOurGateway(
        'gateway',
        { upstreamUrl: await this.mockUrl(), bulkLaneBytes: this.#options.bulkLaneBytes },
        { nodeFlags: ['--expose-gc', ...this.#ourNodeFlags('gateway')] },
      ),
    );
  }

  async gatewayUrls(): Promise<{ httpUrl: string; grpcAddress: string }> {
    const { ready } = await this.gateway();
    return { httpUrl: ready.httpUrl as string, grpcAddress: ready.grpcAddress as string };
  }

  /**
   * A second gateway of ours, the same config plus the operations features on: the `metrics`
   * plugin and tracing of every request (the default sample ratio, 1), exported over OTLP/HTTP to a
   * sink on loopback (bench/lib/otlp-sink.ts). With its own echo service (observedEcho).
   */
  observedGateway(): Promise<Child> {
    return this.#once('gateway-observed', async () => {
      this.#otlpSink ??= startOtlpSink();
      const tracing = { otlpEndpoint: (await this.#otlpSink).url, sampleRatio: 1 };
      return startOurGateway(
        'gateway-observed',
        { plugins: ['metrics'], tracing, bulkLaneBytes: this.#options.bulkLaneBytes },
        { nodeFlags: this.#ourNodeFlags('gateway-observed') },
      );
    });
  }

  #otlpSink: Promise<OtlpSink> | undefined;

  /** Spans the observed gateway exported so far (proof that tracing ran). */
  async tracesReceived(): Promise<OtlpSink['received'] | undefined> {
    return (await this.#otlpSink)?.received;
  }

  /** The demo echo service dialling the observed gateway. */
  observedEcho(): Promise<Child> {
    return this.#once('echo-observed', async () =>
      startEchoFor('echo-observed', await this.observedGateway(), { nodeFlags: this.#ourNodeFlags('echo-observed') }),
    );
  }

  /**
   * A third gateway of ours, the same config plus user-space keys and budgets (row 3c): 100,000 stored
   * keys, the measured one and its account with budgets, prices on the echo service. With its own echo service.
   */
  userSpaceGateway(): Promise<Child> {
    return this.#once('gateway-userspace', () =>
      startOurGateway(
        'gateway-userspace',
        { userSpaceKeys: this.#options.userSpaceKeys ?? BENCH_USERSPACE_KEYS, bulkLaneBytes: this.#options.bulkLaneBytes },
        { nodeFlags: this.#ourNodeFlags('gateway-userspace'), timeoutMs: 180_000 },
      ),
    );
  }

  /** The demo echo service dialling the user-space gateway. */
  userSpaceEcho(): Promise<Child> {
    return this.#once('echo-userspace', async () =>
      startEchoFor('echo-userspace', await this.userSpaceGateway(), { nodeFlags: this.#ourNodeFlags('echo-userspace') }),
    );
  }

  /** Instances of the echo service in its one process (`--echo-instances`). */
  get echoInstances(): number {
    return this.#options.echoInstances ?? 1;
  }

  /** The demo echo service (examples/echo-service/main.ts), unchanged, in its own process; `echoInstances` of it there. */
  echo(): Promise<Child> {
    return this.#once('echo-service', async () =>
      startEchoFor('echo-service', await this.gateway(), {
        nodeFlags: this.#ourNodeFlags('echo-service'),
        instances: this.echoInstances,
      }),
    );
  }

  /**
   * A ticker service (bench/servers/ticker.ts) in its own process, registered as `bench/<service>`:
   * `chunks` stamped chunks per answer (0 = until cancelled), one every `intervalMs`.
   */
  ticker(service: 'ticker' | 'slow', intervalMs: number, chunks: number): Promise<Child> {
    return this.#once(`${service}-service`, async () => {
      const { grpcAddress } = await this.gatewayUrls();
      const child = await startChild(`${service}-service`, {
        script: 'bench/servers/ticker.ts',
        env: {
          PLATFORM_GRPC_HOST: grpcAddress,
          PLATFORM_SERVICE_TOKEN: TOKENS[service],
          BENCH_TICK_MS: String(intervalMs),
          BENCH_TICK_CHUNKS: String(chunks),
        },
        waitReady: true,
      });
      await waitForService(await this.gateway(), service);
      return child;
    });
  }

  /** The bare relay (bench/servers/relay.ts) in front of `upstreamPort`: one more hop and nothing else. */
  relay(upstreamPort: number, name = 'relay'): Promise<Child> {
    return this.#once(name, () =>
      startChild(name, { script: 'bench/servers/relay.ts', env: { BENCH_UPSTREAM: `127.0.0.1:${upstreamPort}` }, waitReady: true }),
    );
  }

  grpcCeiling(): Promise<Child> {
    return this.#once('grpc-ceiling', () =>
      startChild('grpc-ceiling', { script: 'bench/servers/grpc-ceiling.ts', env: { BENCH_BODY: this.body }, waitReady: true }),
    );
  }

  /** Stops every started process, services before the gateway. */
  async stop(name?: string): Promise<void> {
    const order = name
      ? [name]
      : [
          'slow-service',
          'relay',
          'relay-mock',
          'ticker-service',
          'echo-service',
          'echo-observed',
          'echo-userspace',
          'gateway',
          'gateway-observed',
          'gateway-userspace',
          'portkey',
          'litellm',
          'litellm-ticker',
          'fixed-server',
          'grpc-ceiling',
        ];
    for (const key of order) {
      const child = this.#started.get(key);
      if (!child) continue;
      this.#started.delete(key);
      await (await child.catch(() => undefined))?.stop();
    }
    if (!name && this.#otlpSink) {
      await (await this.#otlpSink).close();
      this.#otlpSink = undefined;
    }
  }
}
