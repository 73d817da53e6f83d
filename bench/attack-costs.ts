/**
 * What each of the hostile scenario's authenticated attacks costs the servers, one attack at a time and
 * without the victim's load (`npm run bench:attacks`): for each kind of bench/servers/authed-attacker.ts,
 * `--loops` attacker loops run for `--seconds` against our gateway and the echo service (both on CPU 0,
 * or each on its own from 4 CPUs on; the attacker at nice 19 on the others, as in scenario 9), and
 * the line reports the calls it made, the CPU time each server spent per call (`/proc`, less nothing: compare with the `none` line, the idle
 * servers over the same time), their longest event-loop stall and the codes the attacks were answered.
 * Scenario 9 says whether another account's p99 holds under all of them together; this says which one
 * costs what. Options: `--kinds a,b` (default: none and all four), `--seconds S` (6), `--rounds N` (1),
 * `--loops N` (concurrent attacker loops, 1; scenario 9 runs 4), `--profile` (CPU profiles of the
 * gateway and the echo service, their top frames printed at the end), `--timeline` (each server's
 * event-loop stalls and garbage collections over each attack, totalled by kind: bench/lib/loop-delay.mjs).
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { splitCpus } from './lib/cpu-split.js';
import { ROOT, processCpuMs } from './lib/procs.js';
import { summariseProfiles } from './lib/profile.js';
import { loopDelays, serverTimelines, startAuthedAttacker } from './scenarios/hostile.js';
import { Systems } from './lib/systems.js';
import { timelineTotals } from './lib/slow-answers.js';

const { values } = parseArgs({
  options: {
    kinds: { type: 'string', default: 'none,grpc-ext-flood,grpc-ext-max,http-ext-flood,http-responses' },
    seconds: { type: 'string', default: '6' },
    rounds: { type: 'string', default: '1' },
    loops: { type: 'string', default: '1' },
    profile: { type: 'boolean', default: false },
    timeline: { type: 'boolean', default: false },
  },
});
if (values.timeline) process.env.BENCH_TIMELINE = '1';
const log = (line: string) => console.log(line);
const profileDir = values.profile
  ? join(ROOT, 'bench/results/profiles', `attacks-${new Date().toISOString().replace(/[:.]/g, '-')}`)
  : undefined;
const systems = new Systems({ log, profileDir });

interface AttackerStats {
  calls: number;
  codes: Record<string, number>;
}

try {
  const [gateway, echo] = await Promise.all([systems.gateway(), systems.echo()]);
  const { httpUrl, grpcAddress } = await systems.gatewayUrls();
  const split = splitCpus({ gateway: gateway.pid, 'echo service': echo.pid });
  log(`  CPU split: ${split.description}`);
  try {
    for (let round = 0; round < Number(values.rounds); round++) {
      for (const kind of values.kinds.split(',')) {
        const attacker =
          kind === 'none' ? undefined : await startAuthedAttacker(grpcAddress, httpUrl, Number(values.loops), split.attackerPrefix, kind);
        try {
          await loopDelays({ gateway, echo });
          if (values.timeline) await serverTimelines({ gateway, echo });
          const cpuBefore = [processCpuMs(gateway.pid), processCpuMs(echo.pid)] as const;
          const before = (await attacker?.ask<AttackerStats>('stats')) ?? { calls: 0, codes: {} };
          await new Promise((resolve) => setTimeout(resolve, Number(values.seconds) * 1000));
          const after = (await attacker?.ask<AttackerStats>('stats')) ?? { calls: 0, codes: {} };
          const { gateway: gatewayLoop, echo: echoLoop } = await loopDelays({ gateway, echo });
          const cpu = [processCpuMs(gateway.pid) - cpuBefore[0], processCpuMs(echo.pid) - cpuBefore[1]];
          const calls = after.calls - before.calls;
          const perCall = (ms: number) => (calls ? `${(ms / calls).toFixed(1)} ms/call` : '-');
          log(
            `${kind.padEnd(15)} ${String(calls).padStart(4)} calls  gateway CPU ${cpu[0]} ms (${perCall(cpu[0]!)}), loop max ${gatewayLoop.max} ms, ${gatewayLoop.markCompacts} MC` +
              `  echo CPU ${cpu[1]} ms (${perCall(cpu[1]!)}), loop max ${echoLoop.max} ms, ${echoLoop.markCompacts} MC  ${JSON.stringify(after.codes)}`,
          );
          if (values.timeline) {
            const events = await serverTimelines({ gateway, echo });
            log(`    gateway: ${timelineTotals(events.gateway)}`);
            log(`    echo:    ${timelineTotals(events.echo)}`);
          }
        } finally {
          await attacker?.stop();
        }
      }
    }
  } finally {
    split.restore();
  }
} finally {
  await systems.stop();
}
if (profileDir) process.stdout.write(summariseProfiles(profileDir));
