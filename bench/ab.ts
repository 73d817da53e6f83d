/**
 * `npm run bench:ab -- --base DIR [--rounds N] [--duration S] [--connections C]`: what a change costs
 * on the hot paths, before against after, side by side in one run. DIR is another checkout of the
 * project, built (`npm run build`), e.g. a worktree at the commit before the change
 * (`git worktree add /tmp/base <commit> && (cd /tmp/base && npm ci && npm run build)`).
 *
 * Two of our gateways run at once, each as `npm start` runs it (its own checkout's
 * bench/servers/gateway.mjs over its own dist/, with the Node flags of its own package.json's start
 * script, the bench config of this checkout): `after` (this
 * checkout) and `before` (DIR). Each has its own mock upstream and echo service. Both paths the
 * issues speak of are saturated on each gateway in turn, the order alternating every round so a
 * busy moment weighs on both:
 * - the one-process path: chat adapter → upstream connector → mock upstream (`bench/direct`);
 * - scenario 3: chat adapter → echo service over gRPC (`bench/echo`).
 * The figure is the gateway's CPU per request (user + system from /proc over the run, ÷ answers),
 * which a shared machine disturbs far less than throughput; req/s is printed beside it. Writes
 * bench/results/ab.json.
 */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { benchConfigInput, fixedAnswer, gatewayChatLoad } from './lib/config.js';
import { saturate } from './lib/load.js';
import { machine } from './lib/machine.js';
import { startEchoFor } from './lib/our-gateway.js';
import { ROOT, ensureBuilt, outFile, startChild, type Child } from './lib/procs.js';
import { startCommand } from '../scripts/start-command.mjs';
import { median } from './lib/stats.js';

const { values } = parseArgs({
  options: {
    base: { type: 'string' },
    rounds: { type: 'string' },
    duration: { type: 'string' },
    connections: { type: 'string' },
    out: { type: 'string' },
  },
});
if (!values.base) throw new Error('--base DIR is required: another built checkout of the project (the "before" side)');
const baseDir = resolve(values.base);
const rounds = Number(values.rounds ?? 3);
const durationSec = Number(values.duration ?? 10);
const connections = Number(values.connections ?? 50);
const out = outFile(values.out, 'bench/results/ab.json');

const SIDES = { after: ROOT, before: `${baseDir}/` } as const;
type Side = keyof typeof SIDES;
const PATHS = { 'one-process': 'bench/direct', 'scenario 3': 'bench/echo' } as const;
type PathName = keyof typeof PATHS;

interface Running {
  gateway: Child;
  children: Child[];
  url: string;
}

async function start(side: Side): Promise<Running> {
  const mock = await startChild(`mock-${side}`, { script: 'bench/servers/fixed.ts', env: { BENCH_BODY: fixedAnswer() }, waitReady: true });
  const config = benchConfigInput(`http://127.0.0.1:${mock.ready.port as number}`);
  const gateway = await startChild(`gateway-${side}`, {
    script: `${SIDES[side]}bench/servers/gateway.mjs`,
    // Each side as its own `npm start` runs it, with its own checkout's Node flags.
    nodeFlags: startCommand(SIDES[side]).nodeFlags,
    env: { BENCH_GATEWAY_CONFIG: JSON.stringify(config) },
    waitReady: true,
    readyTimeoutMs: 120_000,
  });
  const echo = await startEchoFor(`echo-${side}`, gateway, { timeoutMs: 120_000 });
  return { gateway, children: [echo, gateway, mock], url: gateway.ready.httpUrl as string };
}

interface Sample {
  rps: number;
  cpuUsPerRequest: number;
  non2xx: number;
}

ensureBuilt();
const running = { after: await start('after'), before: await start('before') } as Record<Side, Running>;
const samples = {} as Record<PathName, Record<Side, Sample[]>>;
for (const path of Object.keys(PATHS) as PathName[]) samples[path] = { after: [], before: [] };
try {
  for (const side of Object.keys(SIDES) as Side[]) {
    for (const model of Object.values(PATHS)) await saturate(gatewayChatLoad(running[side].url, model), { connections, durationSec: 3 }); // warm-up: JIT, connections
  }
  for (let round = 0; round < rounds; round++) {
    const order: Side[] = round % 2 === 0 ? ['after', 'before'] : ['before', 'after'];
    for (const path of Object.keys(PATHS) as PathName[]) {
      for (const side of order) {
        const { gateway, url } = running[side];
        const cpuBefore = gateway.cpuMs();
        const result = await saturate(gatewayChatLoad(url, PATHS[path]), { connections, durationSec });
        const cpuUsPerRequest = ((gateway.cpuMs() - cpuBefore) * 1000) / Math.max(1, result.ok);
        samples[path][side].push({ rps: result.rps, cpuUsPerRequest, non2xx: result.non2xx });
        process.stderr.write(
          `round ${round + 1}, ${path}, ${side}: ${result.rps.toFixed(0)} req/s, gateway ${cpuUsPerRequest.toFixed(0)} µs CPU/request, non-2xx ${result.non2xx}\n`,
        );
      }
    }
  }
} finally {
  for (const { children } of Object.values(running)) for (const child of children) await child.stop();
}

const summary = Object.fromEntries(
  (Object.keys(PATHS) as PathName[]).map((path) => {
    const of = (side: Side) => ({
      rps: median(samples[path][side].map((s) => s.rps)),
      cpuUsPerRequest: median(samples[path][side].map((s) => s.cpuUsPerRequest)),
    });
    const before = of('before');
    const after = of('after');
    // Per round, as every ratio of the bench: both sides of a round saw the same machine.
    const cpuRatio = median(samples[path].after.map((s, i) => s.cpuUsPerRequest / samples[path].before[i]!.cpuUsPerRequest));
    return [path, { before, after, cpuAfterOverBefore: cpuRatio }];
  }),
);
writeFileSync(
  out,
  `${JSON.stringify({ machine: machine(), at: new Date().toISOString(), base: baseDir, settings: { rounds, durationSec, connections }, summary, samples }, null, 2)}\n`,
);
for (const [path, s] of Object.entries(summary)) {
  process.stdout.write(
    `${path.padEnd(12)} before ${s.before.cpuUsPerRequest.toFixed(0)} µs/request (${s.before.rps.toFixed(0)} req/s), after ${s.after.cpuUsPerRequest.toFixed(0)} µs/request (${s.after.rps.toFixed(0)} req/s): after ÷ before ${s.cpuAfterOverBefore.toFixed(3)}\n`,
  );
}
process.stdout.write(`Results: ${out}\n`);
