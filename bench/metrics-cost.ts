/**
 * `npx tsx bench/metrics-cost.ts [--rounds N] [--duration S] [--connections C]`: what the metrics
 * plugin costs. Two of our gateways run side by side (bench/servers/gateway.ts, the bench config),
 * one with the `metrics` plugin and one without, each with its own echo service; the chat adapter is
 * saturated on each in turn, alternating within every round (so a busy machine weighs on both alike),
 * and /metrics is scraped once a second during the runs on the gateway that has it. Prints the
 * median throughput of each and the share lost; writes bench/results/metrics-cost.json.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { BENCH_KEY, TOKENS, chatRequest, gatewayHeaders } from './lib/config.js';
import { saturate, type LoadResult } from './lib/load.js';
import { machine } from './lib/machine.js';
import { ROOT, startChild, waitFor, type Child } from './lib/procs.js';

const { values } = parseArgs({ options: { rounds: { type: 'string' }, duration: { type: 'string' }, connections: { type: 'string' }, out: { type: 'string' } } });
const rounds = Number(values.rounds ?? 3);
const durationSec = Number(values.duration ?? 10);
const connections = Number(values.connections ?? 50);
const out = values.out ?? `${ROOT}bench/results/metrics-cost.json`;

async function start(name: string, extraPlugins: string): Promise<{ url: string; children: Child[] }> {
  const gateway = await startChild(`gateway-${name}`, { script: 'bench/servers/gateway.ts', env: { BENCH_EXTRA_PLUGINS: extraPlugins }, waitReady: true, readyTimeoutMs: 180_000 });
  const httpUrl = gateway.ready.httpUrl as string;
  const echo = await startChild(`echo-${name}`, {
    script: 'examples/echo-service/main.ts',
    env: { PLATFORM_GRPC_HOST: gateway.ready.grpcAddress as string, PLATFORM_SERVICE_TOKEN: TOKENS.echo },
  });
  await waitFor(`echo of ${name}`, async () => {
    const health = (await (await fetch(`${httpUrl}/health`, { headers: gatewayHeaders() })).json()) as { instances?: Record<string, number> };
    return (health.instances?.['bench/echo'] ?? 0) > 0;
  }, 180_000);
  return { url: httpUrl, children: [gateway, echo] };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const on = await start('metrics-on', 'metrics');
const off = await start('metrics-off', '');
const body = JSON.stringify(chatRequest('bench/echo'));
const target = (url: string) => ({ url: `${url}/api/adapters/chatapi/v1/chat/completions`, requests: [{ method: 'POST' as const, headers: gatewayHeaders(), body }] });
const runs: { on: LoadResult[]; off: LoadResult[] } = { on: [], off: [] };
try {
  // Warm-up of both (JIT, connections).
  await saturate(target(on.url), { connections, durationSec: 3 });
  await saturate(target(off.url), { connections, durationSec: 3 });
  for (let round = 0; round < rounds; round++) {
    // Alternate which goes first, so neither always runs on the warmer or the busier machine.
    for (const which of round % 2 ? (['off', 'on'] as const) : (['on', 'off'] as const)) {
      const url = which === 'on' ? on.url : off.url;
      const scraper = which === 'on' ? setInterval(() => void fetch(`${on.url}/metrics`).then((r) => r.text()), 1000) : undefined;
      const result = await saturate(target(url), { connections, durationSec });
      clearInterval(scraper);
      runs[which].push(result);
      process.stderr.write(`round ${round + 1}, metrics ${which}: ${result.rps.toFixed(0)} req/s, p99 ${result.latencyMs.p99.toFixed(2)} ms, non-2xx ${result.non2xx}\n`);
    }
  }
  const scrape = await (await fetch(`${on.url}/metrics`)).text();
  const counted = /gateway_http_requests_total\{[^}]*status="200"[^}]*\} (\d+)/.exec(scrape)?.[1];
  const rpsOn = median(runs.on.map((r) => r.rps));
  const rpsOff = median(runs.off.map((r) => r.rps));
  const lostPercent = ((rpsOff - rpsOn) / rpsOff) * 100;
  const result = {
    machine: machine(),
    at: new Date().toISOString(),
    settings: { rounds, durationSec, connections, key: BENCH_KEY.slice(0, 5) + '…' },
    medianRps: { metricsOn: rpsOn, metricsOff: rpsOff },
    ratio: rpsOn / rpsOff,
    lostPercent,
    target: 'under 5% lost',
    metricsCountedRequests: Number(counted ?? 0),
    runs,
  };
  writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(`metrics on: ${rpsOn.toFixed(0)} req/s, off: ${rpsOff.toFixed(0)} req/s, ratio ${(rpsOn / rpsOff).toFixed(3)}, lost ${lostPercent.toFixed(1)}% (target < 5%)\nResults: ${out}\n`);
} finally {
  for (const child of [...on.children, ...off.children]) await child.stop();
}
