/**
 * An on-CPU profile of our gateway under scenario 3's load or the one-process path's, with Linux `perf` (the README's
 * Benchmarks section quotes one). V8's own sampler (`--profile`) counts wall-clock time, so a
 * process preempted inside a system call is charged there; perf samples only what runs on a CPU,
 * kernel included. The gateway and the echo service run with `--perf-basic-prof` so perf can name
 * JIT-compiled JavaScript.
 *
 *   npx tsx bench/oncpu.ts [seconds=10] [top=40] [path=echo|direct]
 *
 * `echo` is scenario 3 (the chat adapter to the echo service over gRPC); `direct` is the one-process
 * path (the chat adapter to the upstream connector, which calls the mock upstream).
 *
 * Needs `perf` (Debian: linux-perf) and permission to profile a child process
 * (kernel.perf_event_paranoid ≤ 2, the usual default). Writes bench/results/profiles/oncpu.perf.data.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { gatewayChatLoad } from './lib/config.js';
import { saturate } from './lib/load.js';
import { ROOT } from './lib/procs.js';
import { Systems } from './lib/systems.js';

const seconds = Number(process.argv[2] ?? 10);
const top = Number(process.argv[3] ?? 40);
const path = process.argv[4] ?? 'echo';
if (path !== 'echo' && path !== 'direct') {
  console.error(`unknown path ${path}: echo or direct`);
  process.exit(2);
}
if (spawnSync('perf', ['--version']).error) {
  console.error('bench/oncpu.ts needs Linux perf on the PATH (Debian: apt install linux-perf)');
  process.exit(2);
}

const outDir = join(ROOT, 'bench/results/profiles');
mkdirSync(outDir, { recursive: true });
const data = join(outDir, 'oncpu.perf.data');
const systems = new Systems({ nodeFlags: ['--perf-basic-prof'], log: console.log });
try {
  const [{ httpUrl }, gateway] = await Promise.all([
    systems.gatewayUrls(),
    systems.gateway(),
    path === 'echo' ? systems.echo() : systems.mock(),
  ]);
  const target = gatewayChatLoad(httpUrl, `bench/${path}`);
  await saturate(target, { connections: 50, durationSec: 3 }); // warm-up: JIT and pools
  const perf = spawn('perf', ['record', '-F', '999', '-g', '-p', String(gateway.pid), '-o', data, '--', 'sleep', String(seconds)], {
    stdio: 'ignore',
  });
  const recorded = new Promise((resolve) => perf.once('exit', resolve));
  const load = await saturate(target, { connections: 50, durationSec: seconds + 1 });
  await recorded;
  console.log(`\n${Math.round(load.rps)} req/s, ${load.non2xx + load.errors} failed; gateway profiled for ${seconds} s into ${data}\n`);
  for (const sort of ['dso', 'sym']) {
    const report = spawnSync(
      'perf',
      ['report', '-i', data, '--no-children', '--sort', sort, '-g', 'none', '--percent-limit', '0.3', '--stdio'],
      { encoding: 'utf8' },
    );
    const lines = report.stdout.split('\n').filter((line) => /%/.test(line) && !line.startsWith('#'));
    console.log(`by ${sort === 'dso' ? 'binary (kernel, node, JIT-compiled JavaScript)' : 'symbol'}:`);
    console.log(lines.slice(0, sort === 'dso' ? 8 : top).join('\n'), '\n');
  }
} finally {
  await systems.stop();
}
