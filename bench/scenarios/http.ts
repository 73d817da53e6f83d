/**
 * Scenarios 1-6: the same chat completion request to each target, one target at a time, in
 * rounds (the order rotates every round so no target always runs right after the same one):
 *
 * 1. ceiling   - the fixed server answering the body directly;
 * 2. peer      - Portkey's gateway forwarding to the fixed server as an OpenAI upstream;
 *    litellm   - LiteLLM's proxy forwarding to the same fixed server (bench/peers/litellm.ts);
 * 3. ours      - our standard chat adapter to the echo service over gRPC;
 * 3b. ours-observed - the same on a second gateway with the operations features on (the metrics
 *                 plugin, every request traced and exported over OTLP to a sink on loopback), with
 *                 its own echo service: what they cost, beside the default;
 * 3c. ours-userspace - the same on a third gateway with user-space keys and budgets on: the measured key
 *                 is one of 100,000 stored keys, it and its account have budgets (checked before, debited
 *                 after every request), the echo service has prices; with its own echo service;
 * 5. ours-direct - our standard chat adapter to the built-in upstream connector, which calls the same
 *                 fixed server itself: one gateway process, as the peer has. (Scenario 4, the same
 *                 adapter to a separate OpenAI proxy service process, went with the proxy examples:
 *                 the connector is how the gateway forwards to an engine.)
 * 6. relay     - the bare Node relay (bench/servers/relay.ts) in front of the fixed server: the most
 *                 one Node HTTP hop can do on this machine, which the one-process paths read against.
 *
 * Each round: warm-up, then saturation throughput. Then the fixed-rate rounds, at one offered rate
 * at which the peer is not saturated (a fraction of its median saturation throughput, or --rate).
 */
import { BENCH_USERSPACE_KEY, chatRequest, requestHeaders } from '../lib/config.js';
import { fixedRate, saturate, type LoadResult, type LoadTarget } from '../lib/load.js';
import { spread, type Spread } from '../lib/stats.js';
import type { Child } from '../lib/procs.js';
import type { Systems } from '../lib/systems.js';
import { litellmHeaders, type LiteLlmSettings } from '../peers/litellm.js';

export const HTTP_TARGETS = ['ceiling', 'peer', 'litellm', 'ours', 'ours-observed', 'ours-userspace', 'ours-direct', 'relay'] as const;
export type HttpTargetName = (typeof HTTP_TARGETS)[number];

export const HTTP_TARGET_LABELS: Record<HttpTargetName, string> = {
  ceiling: '1. ceiling: minimal Node HTTP server, fixed body',
  peer: '2. peer: Portkey gateway 1.15.2 → mock upstream',
  litellm: '2b. peer: LiteLLM proxy → mock upstream',
  ours: '3. ours: chat adapter → echo service (gRPC)',
  'ours-observed': '3b. ours with metrics and tracing (every request, OTLP): chat adapter → echo service',
  'ours-userspace': '3c. ours with user-space keys and budgets (100,000 stored keys): chat adapter → echo service',
  'ours-direct': '5. ours: chat adapter → upstream connector → mock upstream (one process)',
  relay: '6. bare Node relay → mock upstream (one hop, no logic)',
};

export interface HttpOptions {
  rounds: number;
  durationSec: number;
  warmupSec: number;
  connections: number;
  /** Fixed offered rate; default: rateFraction × the peer's median saturation throughput. */
  rate?: number;
  rateFraction: number;
  /** Whether LiteLLM is a target (BenchOptions.withLiteLlm). */
  withLiteLlm: boolean;
  log: (line: string) => void;
}

export interface HttpTargetResult {
  label: string;
  url: string;
  requestBytes: number;
  responseBodyBytes: number;
  saturation: SaturationResult[];
  fixedRate: LoadResult[];
  summary: {
    /** CPU µs per answer of each process serving the target (median over rounds). */
    cpuUsPerRequest: Record<string, number>;
    rps: Spread;
    p50Ms: Spread;
    p99Ms: Spread;
    /** Throughput over the peer's in the same round. */
    rpsVsPeer: Spread;
    /** The peer's p99 over this target's p99 at the fixed rate, same round (≥ 5 is the target). */
    p99PeerOverThis: Spread;
    /** Throughput over the bare relay's in the same round (a share of what one Node hop can do). */
    rpsVsRelay: Spread;
    /** Throughput over LiteLLM's in the same round, and LiteLLM's p99 over this target's at the fixed rate. */
    rpsVsLiteLlm: Spread;
    p99LiteLlmOverThis: Spread;
    /** Throughput over scenario 3's (ours, default plugins) in the same round: what 3b's features cost. */
    rpsVsOurs: Spread;
  };
}

export interface HttpResult {
  settings: Omit<HttpOptions, 'log'> & { rate: number; litellm?: LiteLlmSettings };
  /** Every target; LiteLLM only when it took part. */
  targets: Record<Exclude<HttpTargetName, 'litellm'>, HttpTargetResult> & { litellm?: HttpTargetResult };
  /** What 3b's gateway exported to the OTLP sink over the scenario: proof that tracing ran. */
  traceExports: { exports: number; bytes: number };
}

interface Target extends LoadTarget {
  label: string;
  /** The processes that serve this target, for CPU time per request. */
  processes: Child[];
}

/** Saturation run with the CPU time each process of the target (and the load generator) spent per answer. */
export type SaturationResult = LoadResult & { cpuUsPerRequest: Record<string, number> };

async function targetsOf(systems: Systems, withLiteLlm: boolean): Promise<Partial<Record<HttpTargetName, Target>>> {
  const [mock, portkey, gateway] = await Promise.all([systems.mockUrl(), systems.portkeyUrl(), systems.gatewayUrls()]);
  const [echo, mockChild, portkeyChild, gatewayChild] = await Promise.all([
    systems.echo(),
    systems.mock(),
    systems.portkey(),
    systems.gateway(),
  ]);
  const relayChild = await systems.relay(Number(new URL(mock).port), 'relay-mock');
  const [observedGateway, observedEcho] = await Promise.all([systems.observedGateway(), systems.observedEcho()]);
  const [userSpaceGateway, userSpaceEcho] = await Promise.all([systems.userSpaceGateway(), systems.userSpaceEcho()]);
  const headers = requestHeaders(Number(new URL(mock).port));
  const request = (model: string) => [{ method: 'POST', headers, body: JSON.stringify(chatRequest(model)) }];
  const adapter = `${gateway.httpUrl}/api/adapters/chatapi/v1/chat/completions`;
  return {
    ceiling: {
      label: HTTP_TARGET_LABELS.ceiling,
      url: `${mock}/v1/chat/completions`,
      requests: request('bench/echo'),
      processes: [mockChild],
    },
    peer: {
      label: HTTP_TARGET_LABELS.peer,
      url: `${portkey}/v1/chat/completions`,
      requests: request('bench/echo'),
      processes: [portkeyChild, mockChild],
    },
    ours: { label: HTTP_TARGET_LABELS.ours, url: adapter, requests: request('bench/echo'), processes: [gatewayChild, echo] },
    'ours-observed': {
      label: HTTP_TARGET_LABELS['ours-observed'],
      url: `${observedGateway.ready.httpUrl as string}/api/adapters/chatapi/v1/chat/completions`,
      requests: request('bench/echo'),
      processes: [observedGateway, observedEcho],
    },
    'ours-userspace': {
      label: HTTP_TARGET_LABELS['ours-userspace'],
      url: `${userSpaceGateway.ready.httpUrl as string}/api/adapters/chatapi/v1/chat/completions`,
      requests: [
        {
          method: 'POST',
          headers: { ...headers, authorization: `Bearer ${BENCH_USERSPACE_KEY}` },
          body: JSON.stringify(chatRequest('bench/echo')),
        },
      ],
      processes: [userSpaceGateway, userSpaceEcho],
    },
    'ours-direct': {
      label: HTTP_TARGET_LABELS['ours-direct'],
      url: adapter,
      requests: request('bench/direct'),
      processes: [gatewayChild, mockChild],
    },
    relay: {
      label: HTTP_TARGET_LABELS.relay,
      url: `http://127.0.0.1:${relayChild.ready.port as number}/v1/chat/completions`,
      requests: request('bench/echo'),
      processes: [relayChild, mockChild],
    },
    ...(withLiteLlm ? { litellm: await liteLlmTarget(systems, mockChild) } : {}),
  };
}

async function liteLlmTarget(systems: Systems, mockChild: Child): Promise<Target> {
  const [litellm, litellmChild] = await Promise.all([systems.litellmUrl(), systems.litellm()]);
  const settings = litellmChild.ready.settings as LiteLlmSettings;
  const requests = [{ method: 'POST', headers: litellmHeaders(), body: JSON.stringify(chatRequest('bench/echo')) }];
  return {
    label: `${HTTP_TARGET_LABELS.litellm} (${settings.version}, ${settings.workers} workers)`,
    url: `${litellm}/v1/chat/completions`,
    requests,
    processes: [litellmChild, mockChild],
  };
}

/** One request per target: it must be a 200 chat.completion; returns the body size. */
async function measuredSaturation(target: Target, settings: { connections: number; durationSec: number }): Promise<SaturationResult> {
  const before = target.processes.map((p) => p.cpuMs());
  const own = process.cpuUsage();
  const result = await saturate(target, settings);
  const ownAfter = process.cpuUsage(own);
  const perRequest = (ms: number) => Math.round((ms * 1000) / Math.max(1, result.ok));
  const cpuUsPerRequest: Record<string, number> = {};
  target.processes.forEach((p, i) => (cpuUsPerRequest[p.name] = perRequest(p.cpuMs() - before[i]!)));
  cpuUsPerRequest['load generator'] = perRequest((ownAfter.user + ownAfter.system) / 1000);
  return { ...result, cpuUsPerRequest };
}

async function probe(name: string, target: LoadTarget): Promise<number> {
  const request = target.requests[0]!;
  const res = await fetch(target.url, { method: 'POST', headers: request.headers, body: request.body });
  const text = await res.text();
  let object: unknown;
  try {
    object = (JSON.parse(text) as { object?: unknown }).object;
  } catch {
    object = undefined;
  }
  if (res.status !== 200 || object !== 'chat.completion') {
    throw new Error(`${name}: expected a 200 chat.completion, got ${res.status}: ${text.slice(0, 300)}`);
  }
  return Buffer.byteLength(text);
}

export async function runHttp(systems: Systems, options: HttpOptions): Promise<HttpResult> {
  const found = await targetsOf(systems, options.withLiteLlm);
  const names = HTTP_TARGETS.filter((name) => found[name]);
  const targets = found as Record<HttpTargetName, Target>;
  const sizes = {} as Record<HttpTargetName, number>;
  for (const name of names) sizes[name] = await probe(name, targets[name]);
  const settings = { connections: options.connections, durationSec: options.durationSec };
  // Every target's list, empty for one that did not take part: its ratios are NaN ('–' in the report).
  const saturation = Object.fromEntries(HTTP_TARGETS.map((n) => [n, [] as SaturationResult[]])) as Record<
    HttpTargetName,
    SaturationResult[]
  >;
  const fixed = Object.fromEntries(HTTP_TARGETS.map((n) => [n, [] as LoadResult[]])) as Record<HttpTargetName, LoadResult[]>;
  const rotated = (round: number) => names.map((_, i) => names[(i + round) % names.length]!);

  for (let round = 0; round < options.rounds; round++) {
    for (const name of rotated(round)) {
      if (options.warmupSec > 0) await saturate(targets[name], { ...settings, durationSec: options.warmupSec });
      const result = await measuredSaturation(targets[name], settings);
      saturation[name].push(result);
      const cpu = Object.entries(result.cpuUsPerRequest)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ');
      options.log(
        `  saturation round ${round + 1} ${name.padEnd(10)} ${result.rps.toFixed(0).padStart(6)} req/s  p99 ${result.latencyMs.p99.toFixed(1)} ms  CPU µs/request: ${cpu}${problems(result)}`,
      );
    }
  }

  // A rate no target saturates: a fraction of the slower peer's median saturation throughput.
  const peerRps = Math.min(
    ...['peer' as const, 'litellm' as const].filter((n) => names.includes(n)).map((n) => spread(saturation[n].map((r) => r.rps)).median),
  );
  const rate = options.rate ?? Math.max(1, Math.round(options.rateFraction * peerRps));
  options.log(
    `  fixed rate: ${rate} req/s (${options.rate ? 'given' : `${options.rateFraction} × the slower peer's median saturation throughput`})`,
  );
  for (let round = 0; round < options.rounds; round++) {
    for (const name of rotated(round)) {
      const result = await fixedRate(targets[name], settings, rate);
      fixed[name].push(result);
      options.log(
        `  fixed rate round ${round + 1} ${name.padEnd(10)} ${result.rps.toFixed(0).padStart(6)} req/s  p50 ${result.latencyMs.p50.toFixed(2)} ms  p99 ${result.latencyMs.p99.toFixed(2)} ms${problems(result)}`,
      );
    }
  }

  const perRound = (a: LoadResult[], b: LoadResult[], f: (x: LoadResult, y: LoadResult) => number) =>
    a.map((x, i) => (b[i] ? f(x, b[i]!) : NaN));
  const result = {} as HttpResult['targets'];
  for (const name of names) {
    result[name] = {
      label: targets[name].label,
      url: targets[name].url,
      requestBytes: Buffer.byteLength(targets[name].requests[0]!.body ?? ''),
      responseBodyBytes: sizes[name],
      saturation: saturation[name],
      fixedRate: fixed[name],
      summary: {
        cpuUsPerRequest: Object.fromEntries(
          Object.keys(saturation[name][0]?.cpuUsPerRequest ?? {}).map((k) => [
            k,
            spread(saturation[name].map((r) => r.cpuUsPerRequest[k] ?? NaN)).median,
          ]),
        ),
        rps: spread(saturation[name].map((r) => r.rps)),
        p50Ms: spread(fixed[name].map((r) => r.latencyMs.p50)),
        p99Ms: spread(fixed[name].map((r) => r.latencyMs.p99)),
        rpsVsPeer: spread(perRound(saturation[name], saturation.peer, (x, y) => x.rps / y.rps)),
        p99PeerOverThis: spread(perRound(fixed[name], fixed.peer, (x, y) => y.latencyMs.p99 / x.latencyMs.p99)),
        rpsVsRelay: spread(perRound(saturation[name], saturation.relay, (x, y) => x.rps / y.rps)),
        rpsVsLiteLlm: spread(perRound(saturation[name], saturation.litellm, (x, y) => x.rps / y.rps)),
        p99LiteLlmOverThis: spread(perRound(fixed[name], fixed.litellm, (x, y) => y.latencyMs.p99 / x.latencyMs.p99)),
        rpsVsOurs: spread(perRound(saturation[name], saturation.ours, (x, y) => x.rps / y.rps)),
      },
    };
  }
  const { log: _log, ...rest } = options;
  const traceExports = { ...((await systems.tracesReceived()) ?? { exports: 0, bytes: 0 }) };
  const litellm = options.withLiteLlm ? ((await systems.litellm()).ready.settings as LiteLlmSettings) : undefined;
  return { settings: { ...rest, rate, ...(litellm ? { litellm } : {}) }, targets: result, traceExports };
}

function problems(result: LoadResult): string {
  const bad = result.non2xx + result.errors + result.timeouts;
  return bad ? `  (${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts)` : '';
}
