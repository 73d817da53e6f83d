/**
 * `npm run bench:costs -- [--rounds N] [--duration S] [--connections C] [--profile]`: what the
 * operations features cost. Five of our gateways run side by side (bench/servers/gateway.mjs, compiled, the bench config,
 * each with its own echo service): the default plugins (`plain`, twice), plus the `metrics` plugin
 * (`metrics`), plus metrics and OpenTelemetry tracing of every request exported over OTLP/HTTP to a
 * sink on loopback (`metrics+tracing`, sample ratio 1: the most tracing can cost), and the same with
 * one trace in ten sampled (`metrics+tracing 10%`). The chat adapter is
 * saturated on each in turn, the order rotating every round (so a busy machine weighs on all alike),
 * and /metrics is scraped once a second on those that have it. Prints the median throughput of each
 * and the median over rounds of the share lost against the two plain gateways' mean in the same
 * round, with their own gap as the noise floor; writes
 * bench/results/feature-cost.json. `--profile` also writes each gateway's CPU profile and prints its
 * top frames.
 */
import { readdirSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { BENCH_KEY, BENCH_METRICS_TOKEN, gatewayChatLoad } from './lib/config.js';
import { saturate, type LoadResult } from './lib/load.js';
import { startOtlpSink } from './lib/otlp-sink.js';
import { startEchoFor, startOurGateway } from './lib/our-gateway.js';
import { machine } from './lib/machine.js';
import { summariseProfile } from './lib/profile.js';
import { median } from './lib/stats.js';
import { ROOT, outFile, type Child } from './lib/procs.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string' },
    duration: { type: 'string' },
    connections: { type: 'string' },
    out: { type: 'string' },
    profile: { type: 'boolean' },
    'scrape-ms': { type: 'string' },
  },
});
const rounds = Number(values.rounds ?? 3);
const durationSec = Number(values.duration ?? 10);
const connections = Number(values.connections ?? 50);
const out = outFile(values.out, 'bench/results/feature-cost.json');
/** With --profile, each gateway writes a CPU profile here (one folder per variant) and its top frames are printed. */
const profileDir = values.profile ? `${ROOT}bench/results/profiles/feature-cost` : undefined;

/** How often /metrics is scraped during a run: the scrape interval Prometheus setups commonly use. */
const SCRAPE_EVERY_MS = Number(values['scrape-ms'] ?? 15_000);
const SCRAPE = { headers: { authorization: `Bearer ${BENCH_METRICS_TOKEN}` } };

// Two plain gateways: processes that differ in nothing still differ by several percent on a shared
// 2-vCPU machine (an A/A run: 6.7%), so the baseline is their mean, and their gap is the noise floor.
const VARIANTS = ['plain', 'plain again', 'metrics', 'metrics+tracing', 'metrics+tracing 10%'] as const;
type Variant = (typeof VARIANTS)[number];

const sink = await startOtlpSink();

async function start(variant: Variant): Promise<{ url: string; children: Child[] }> {
  const plain = variant.startsWith('plain');
  const tracing = variant.includes('tracing') ? { otlpEndpoint: sink.url, sampleRatio: variant.endsWith('10%') ? 0.1 : 1 } : undefined;
  const nodeFlags = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}/${variant}`] : [];
  const gateway = await startOurGateway(
    `gateway-${variant}`,
    { plugins: plain ? [] : ['metrics'], tracing },
    { nodeFlags, timeoutMs: 180_000 },
  );
  const echo = await startEchoFor(`echo-${variant}`, gateway, { timeoutMs: 180_000 });
  return { url: gateway.ready.httpUrl as string, children: [gateway, echo] };
}

const gateways = {} as Record<Variant, { url: string; children: Child[] }>;
for (const variant of VARIANTS) gateways[variant] = await start(variant);
const runs = Object.fromEntries(VARIANTS.map((v) => [v, [] as LoadResult[]])) as Record<Variant, LoadResult[]>;
try {
  for (const variant of VARIANTS) await saturate(gatewayChatLoad(gateways[variant].url), { connections, durationSec: 3 }); // warm-up: JIT, connections
  for (let round = 0; round < rounds; round++) {
    const order = VARIANTS.map((_, i) => VARIANTS[(i + round) % VARIANTS.length]!);
    for (const variant of order) {
      const { url } = gateways[variant];
      const scraper = variant.startsWith('plain')
        ? undefined
        : setInterval(() => void fetch(`${url}/metrics`, SCRAPE).then((r) => r.text()), SCRAPE_EVERY_MS);
      const result = await saturate(gatewayChatLoad(url), { connections, durationSec });
      clearInterval(scraper);
      runs[variant].push(result);
      process.stderr.write(
        `round ${round + 1}, ${variant}: ${result.rps.toFixed(0)} req/s, p99 ${result.latencyMs.p99.toFixed(2)} ms, non-2xx ${result.non2xx}\n`,
      );
    }
  }
  const scrape = await (await fetch(`${gateways.metrics.url}/metrics`, SCRAPE)).text();
  const counted = /gateway_http_requests_total\{[^}]*status="200"[^}]*\} (\d+)/.exec(scrape)?.[1];
  const medianRps = Object.fromEntries(VARIANTS.map((v) => [v, median(runs[v].map((r) => r.rps))])) as Record<Variant, number>;
  // Within each round, as every ratio of the bench: a busy moment weighs on both sides of it.
  const baseline = (round: number) => (runs.plain[round]!.rps + runs['plain again'][round]!.rps) / 2;
  const lostPercent = (v: Variant) => median(runs[v].map((r, round) => (1 - r.rps / baseline(round)) * 100));
  const noiseFloorPercent = median(
    runs.plain.map((r, round) => (Math.abs(r.rps - runs['plain again'][round]!.rps) / baseline(round)) * 100),
  );
  const result = {
    machine: machine(),
    at: new Date().toISOString(),
    settings: {
      rounds,
      durationSec,
      connections,
      key: BENCH_KEY.slice(0, 5) + '…',
      tracing: { sampleRatio: '1, or 0.1 for the 10% variant', exporter: 'OTLP/HTTP protobuf to a loopback sink' },
    },
    medianRps,
    lostPercent: Object.fromEntries(VARIANTS.slice(2).map((v) => [v, lostPercent(v)])),
    noiseFloorPercent,
    target: 'metrics: under 5% lost',
    metricsCountedRequests: Number(counted ?? 0),
    traceExports: { ...sink.received },
    runs,
  };
  writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
  for (const v of VARIANTS) {
    process.stdout.write(
      `${v.padEnd(20)} ${medianRps[v].toFixed(0).padStart(6)} req/s${v.startsWith('plain') ? '' : `, lost ${lostPercent(v).toFixed(1)}%`}\n`,
    );
  }
  process.stdout.write(`noise floor (the two plain gateways apart): ${noiseFloorPercent.toFixed(1)}%\n`);
  process.stdout.write(
    `trace exports received: ${sink.received.exports} (${(sink.received.bytes / 1024).toFixed(0)} KiB)\nResults: ${out}\n`,
  );
} finally {
  for (const { children } of Object.values(gateways)) for (const child of children) await child.stop();
  await sink.close();
}
if (profileDir) {
  for (const variant of VARIANTS) {
    for (const file of readdirSync(`${profileDir}/${variant}`).filter((f) => f.endsWith('.cpuprofile'))) {
      process.stdout.write(`\n== ${variant}: ${file}\n${summariseProfile(`${profileDir}/${variant}/${file}`)}\n`);
    }
  }
}
