/**
 * `npm run bench [-- options]`: runs the benchmark, prints the tables and writes
 * bench/results/latest.json (and latest.md). Options:
 *
 *   --only http,streaming,grpc,validation,memory,hostile,workers,store   scenarios to run (default: all)
 *   --rounds N          rounds of each comparison (default 3)
 *   --duration S        seconds per measured run (default 10)
 *   --warmup S          seconds of warm-up before each saturation run (default 3)
 *   --connections N     autocannon connections, every target alike (default 50)
 *   --rate R            fixed offered rate for the latency runs (default: half the peer's throughput)
 *   --streams N         open streams of the memory scenario (default 1000)
 *   --drift S           steady-run length of the memory scenario (default 60)
 *   --long              the steady run lasts 10 minutes
 *   --drift-rate R      offered rate of the steady run (default 200)
 *   --hostile-rate R    offered chat rate of the hostile scenario (default 200)
 *   --hostile-warmup S  seconds of its chat load before its first round, then a warm-up round reported apart,
 *                       not judged (default 20; 0: neither)
 *   --attack-loops N    concurrent loops of its unauthenticated attacker (default 4)
 *   --echo-instances N  our gateway's echo service as N instances in one process, each its own stream, in every
 *                       scenario that calls it (default 1, as in the demo)
 *   --bulk-lane-bytes N our gateways' gate.bulkLaneBytes (default the gateway's, 256 KiB); 0: no bulk lanes, as
 *                       before 2026-11-27 (docs/benchmarks.md, "One instance's bulk lane")
 *   --explain           hostile: print what overlapped the slowest answers under the authenticated attacker
 *   --profile           write CPU profiles of our gateway and services, print their top frames
 *   --smoke             tiny settings: checks that everything runs, figures mean nothing
 *   --out FILE          where the JSON goes (default bench/results/latest.json)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_OPTIONS, SCENARIOS, SMOKE_OPTIONS, runBench, type BenchOptions, type ScenarioName } from './harness.js';
import { installLiteLlm } from './peers/litellm.js';
import { ROOT, outFile } from './lib/procs.js';
import { summariseProfiles } from './lib/profile.js';
import { markdown, verdicts } from './lib/report.js';

const { values } = parseArgs({
  options: {
    only: { type: 'string' },
    rounds: { type: 'string' },
    duration: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string' },
    rate: { type: 'string' },
    streams: { type: 'string' },
    drift: { type: 'string' },
    long: { type: 'boolean', default: false },
    'drift-rate': { type: 'string' },
    'hostile-rate': { type: 'string' },
    'hostile-warmup': { type: 'string' },
    'attack-loops': { type: 'string' },
    'echo-instances': { type: 'string' },
    'bulk-lane-bytes': { type: 'string' },
    profile: { type: 'boolean', default: false },
    explain: { type: 'boolean', default: false },
    smoke: { type: 'boolean', default: false },
    out: { type: 'string' },
  },
});

/** A byte count, 0 included. */
const bytes = (v: string): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new Error(`not a byte count: ${v}`);
  return n;
};
const num = (v: string | undefined, fallback: number): number => {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`not a positive number: ${v}`);
  return n;
};

const base = values.smoke ? SMOKE_OPTIONS : DEFAULT_OPTIONS;
const scenarios = values.only ? (values.only.split(',').map((s) => s.trim()) as ScenarioName[]) : base.scenarios;
for (const s of scenarios) if (!SCENARIOS.includes(s)) throw new Error(`unknown scenario '${s}' (one of ${SCENARIOS.join(', ')})`);
const profileDir = values.profile ? join(ROOT, 'bench/results/profiles', new Date().toISOString().replace(/[:.]/g, '-')) : undefined;

const options: BenchOptions = {
  ...base,
  scenarios,
  rounds: num(values.rounds, base.rounds),
  durationSec: num(values.duration, base.durationSec),
  warmupSec: values.warmup === '0' ? 0 : num(values.warmup, base.warmupSec),
  connections: num(values.connections, base.connections),
  rate: values.rate ? num(values.rate, 1) : base.rate,
  openStreams: num(values.streams, base.openStreams),
  driftSec: values.long ? 600 : num(values.drift, base.driftSec),
  driftRate: num(values['drift-rate'], base.driftRate),
  hostileRate: num(values['hostile-rate'], base.hostileRate),
  hostileWarmupSec: values['hostile-warmup'] === '0' ? 0 : num(values['hostile-warmup'], base.hostileWarmupSec),
  attackLoops: num(values['attack-loops'], base.attackLoops),
  echoInstances: num(values['echo-instances'], base.echoInstances),
  bulkLaneBytes: values['bulk-lane-bytes'] === undefined ? undefined : bytes(values['bulk-lane-bytes']),
  explain: values.explain,
  profileDir,
  log: (line) => process.stderr.write(`${line}\n`),
};

// The servers started from here keep a timeline of their stalls and collections (bench/lib/loop-delay.mjs).
if (values.explain) process.env.BENCH_TIMELINE = '1';
// The LiteLLM peer runs at its newest release (the issue asks for the latest; its version is recorded).
if (scenarios.includes('http') || scenarios.includes('streaming')) installLiteLlm(options.log);
const results = await runBench(options);
const table = markdown(results);
const out = outFile(values.out, 'bench/results/latest.json');
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify({ ...results, targets: verdicts(results) }, null, 2)}\n`);
writeFileSync(out.replace(/\.json$/, '.md'), `${table}\n`);
process.stdout.write(`\n${table}\n\nResults: ${out}\n`);
if (profileDir) process.stdout.write(summariseProfiles(profileDir));
