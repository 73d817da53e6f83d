/**
 * Scenario 9 (#15 "Broken"): the chat adapter's latency while an unauthenticated gRPC caller loops
 * the largest `Gate.process` message the client limits allow (4 MiB, headers at their cap, no
 * authToken). Each round measures the chat adapter at a fixed rate without the attacker, then with it
 * (bench/servers/attacker.ts, its own process), and reports p99 under attack ÷ p99 without, taken
 * within the round. Target: at most 2. The attacker's answers are counted by error code: every one
 * must be a coded refusal (API_KEY_MISSING), never a success or an uncoded failure.
 *
 * Then (#25 N1) the same with an authenticated attacker of another account
 * (bench/servers/authed-attacker.ts): maximal `ext` maps over gRPC and HTTP (300,000 and 1,000,000
 * entries, and the largest map the limits allow) and 30 MB Responses bodies, back to back. Same
 * target, p99 with ÷ without within the round at most 2; its floods must be answered with
 * EXT_PARAMS_TOO_LARGE and JSON_TOO_MANY_MEMBERS.
 *
 * And an account sending only its costliest kind (COSTLIEST_ATTACK, the served 4 MiB ext calls), every
 * loop, at the rate its input allows: an attacker picks the attack that hurts most, and in the rotation
 * above those calls are two a round (docs/benchmarks.md). Same target. It is an account of its own
 * (COSTLIEST_ATTACKER_KEY): the rotating attacker's account ends its phase owing seconds of its rate.
 *
 * Before the first round the servers are warmed up: the chat load alone, then one round as the others,
 * every attack's first run on these servers, reported apart and not judged (see measure below).
 *
 * The servers (gateway, echo service) run on CPU 0 (from 4 CPUs on, each on its own), the load
 * generator and the attackers on the other CPUs, the attackers at nice 19 (bench/lib/cpu-split.ts),
 * in every run alike: the ratio then measures what the attack costs the servers, not the attacker's
 * own CPU taken from the victim's client. Each run also reads the event loop's delay of the gateway
 * and of the echo service (bench/lib/loop-delay.mjs), to tell a blocked loop from a wait elsewhere.
 */
import { COSTLIEST_ATTACKER_KEY, gatewayChatLoad } from '../lib/config.js';
import { fixedRate, type LoadResult } from '../lib/load.js';
import { explainSlowest, type TimedEvent } from '../lib/slow-answers.js';
import { splitCpus } from '../lib/cpu-split.js';
import { startChild, waitFor, type Child } from '../lib/procs.js';
import { spread, type Spread } from '../lib/stats.js';
import type { Systems } from '../lib/systems.js';

/** The two servers under test. */
type Servers = { gateway: Child; echo: Child };

/** Where the processes ran: the CPU split, and the instances of the echo service the accounts share (`--echo-instances`). */
type Placement = { cpuSplit: string; echoInstances: number };

export interface HostileOptions {
  rounds: number;
  durationSec: number;
  connections: number;
  /** Offered chat requests per second (the same with and without the attacker). */
  rate: number;
  /** Concurrent attacker loops. */
  attackLoops: number;
  /** Seconds of the same chat load before the first round, not measured. */
  warmupSec: number;
  /**
   * `--explain`: after each run with the authenticated attacker, print what overlapped its slowest
   * answers (bench/lib/slow-answers.ts). The servers must have been started with BENCH_TIMELINE set.
   */
  explain?: boolean;
  log: (line: string) => void;
}

/** A process's event-loop delay over one run, ms (bench/lib/loop-delay.mjs). */
export interface LoopDelay {
  p50: number;
  p99: number;
  max: number;
  /** Mark-compacts over the run. */
  markCompacts: number;
}

/** The loop delays of the gateway and of the echo service over one run. */
export interface ServerLoopDelays {
  gateway: LoopDelay;
  echo: LoopDelay;
}

export interface HostileRound {
  baseline: LoadResult;
  baselineLoopDelay: ServerLoopDelays;
  authedLoopDelay: ServerLoopDelays;
  attacked: LoadResult;
  /** Attacker calls per second during the attacked run, and the codes the gateway answered them with. */
  attackerCallsPerSec: number;
  attackerCodes: Record<string, number>;
  attackerMessageBytes: number;
  /** The same chat load with the authenticated attacker, and what it was answered (`<attack>: <code>`). */
  authedAttacked: LoadResult;
  authedAttackerCallsPerSec: number;
  authedAttackerCodes: Record<string, number>;
  /** The same load with the authenticated attacker sending COSTLIEST_ATTACK only. */
  costliest: AuthedRun;
}

/** One run of the chat load under the authenticated attacker (some or all of its kinds). */
type AuthedRun = Pick<HostileRound, 'authedAttacked' | 'authedAttackerCallsPerSec' | 'authedAttackerCodes' | 'authedLoopDelay'>;

/** The authenticated attacker's kind that, sent alone, costs another account most (docs/benchmarks.md). */
export const COSTLIEST_ATTACK = 'grpc-ext-max';

/** Each verdict row's run under attack within a round: the keyless attacker, the authenticated one, its costliest attack alone. */
export const HOSTILE_ROWS = {
  keyless: (round: HostileRound) => round.attacked,
  authed: (round: HostileRound) => round.authedAttacked,
  costliest: (round: HostileRound) => round.costliest.authedAttacked,
} satisfies Record<string, (round: HostileRound) => LoadResult>;

/** A row's p99 under attack ÷ its round's p99 without: the figure each verdict judges. */
export function p99Ratio(round: HostileRound, row: (round: HostileRound) => LoadResult): number {
  return row(round).latencyMs.p99 / round.baseline.latencyMs.p99;
}

export interface HostileResult {
  settings: Omit<HostileOptions, 'log'> & Placement;
  /** With a warm-up only: its round, every attack's first run on these servers (reported, not judged). */
  warmupRound?: HostileRound;
  rounds: HostileRound[];
  summary: {
    baselineP99Ms: Spread;
    attackedP99Ms: Spread;
    p99Ratio: Spread;
    attackerCallsPerSec: Spread;
    authedAttackedP99Ms: Spread;
    authedP99Ratio: Spread;
    authedAttackerCallsPerSec: Spread;
    costliestAttackedP99Ms: Spread;
    costliestP99Ratio: Spread;
  };
}

export async function runHostile(systems: Systems, options: HostileOptions): Promise<HostileResult> {
  const [gateway, echo] = await Promise.all([systems.gateway(), systems.echo()]);
  const { httpUrl, grpcAddress } = await systems.gatewayUrls();
  const split = splitCpus({ gateway: gateway.pid, 'echo service': echo.pid });
  options.log(`  CPU split: ${split.description}`);
  try {
    const placement = { cpuSplit: split.description, echoInstances: systems.echoInstances };
    return await measure({ gateway, echo }, options, httpUrl, grpcAddress, split.attackerPrefix, placement);
  } finally {
    split.restore();
  }
}

async function measure(
  servers: Servers,
  options: HostileOptions,
  httpUrl: string,
  grpcAddress: string,
  attackerPrefix: string[],
  placement: Placement,
): Promise<HostileResult> {
  const target = gatewayChatLoad(httpUrl);
  const settings = { connections: options.connections, durationSec: options.durationSec };
  const rounds: HostileRound[] = [];
  // A gateway just started compiles its hot paths during the first seconds of load: the first round's
  // run without the attacker measured that (p99 140-410 ms against 12-18 ms in the next rounds), and
  // after 3 s still 2-3 times the next rounds' (the harness's hostileWarmupSec).
  if (options.warmupSec > 0) await fixedRate(target, { ...settings, durationSec: options.warmupSec }, options.rate);
  // Then a whole round that is reported but not judged, the attacks' first runs on these servers.
  // Their first calls take paths neither server has run yet, and V8 compiles them then: measured
  // apart, the rotating attacker's first run read × 2.4-5.3 and the costliest attack's × 1.8-4.8,
  // where the judged rounds' medians are about 1.6 and 2.4 (docs/benchmarks.md). A gateway in
  // production meets that once in its life; the chat warm-up above is the same for the victim's paths.
  let warmupRound: HostileRound | undefined;
  for (let round = options.warmupSec > 0 ? 0 : 1; round <= options.rounds; round++) {
    const name = round === 0 ? 'hostile warm-up round (not judged)' : `hostile round ${round}`;
    await loopDelays(servers);
    const baseline = await fixedRate(target, settings, options.rate);
    const baselineLoopDelay = await loopDelays(servers);
    const attacker = await startChild('attacker', {
      script: 'bench/servers/attacker.ts',
      env: { BENCH_ATTACK_TARGET: grpcAddress, BENCH_ATTACK_LOOPS: String(options.attackLoops) },
      prefix: attackerPrefix,
      waitReady: true,
    });
    try {
      const before = await attacker.ask<{ calls: number }>('stats');
      const started = performance.now();
      const attacked = await fixedRate(target, settings, options.rate);
      type Stats = { calls: number; codes: Record<string, number>; messageBytes: number };
      let after = await attacker.ask<Stats>('stats');
      const attackerCallsPerSec = (after.calls - before.calls) / ((performance.now() - started) / 1000);
      // A keyless message is answered once its sender has sent all of it, at the gateway-wide
      // unauthenticated rate (2 MiB/s by default): about two seconds for 4 MiB. A run shorter than
      // that (smoke mode) waits for the attacker's first answer, so the codes it reports are real.
      await waitFor("the attacker's first answer", async () => (after = await attacker.ask<Stats>('stats')).calls > 0);
      options.log(
        `  ${name}: chat p99 ${baseline.latencyMs.p99.toFixed(2)} ms → ${attacked.latencyMs.p99.toFixed(2)} ms under attack ` +
          `(× ${(attacked.latencyMs.p99 / baseline.latencyMs.p99).toFixed(2)}); attacker ${attackerCallsPerSec.toFixed(0)} calls/s of ${after.messageBytes} bytes, answered ${JSON.stringify(after.codes)}`,
      );
      const authed = await underAuthenticatedAttacker(target, settings, options, httpUrl, grpcAddress, attackerPrefix, servers);
      const costliest = await underAuthenticatedAttacker(
        target,
        settings,
        options,
        httpUrl,
        grpcAddress,
        attackerPrefix,
        servers,
        COSTLIEST_ATTACK,
        COSTLIEST_ATTACKER_KEY,
      );
      const measured: HostileRound = {
        baseline,
        baselineLoopDelay,
        attacked,
        attackerCallsPerSec,
        attackerCodes: after.codes,
        attackerMessageBytes: after.messageBytes,
        ...authed,
        costliest,
      };
      if (round === 0) warmupRound = measured;
      else rounds.push(measured);
      const p = (r: LoadResult) =>
        `p50 ${r.latencyMs.p50.toFixed(2)}, p90 ${r.latencyMs.p90.toFixed(2)}, p99 ${r.latencyMs.p99.toFixed(2)}`;
      const ratioLine = (under: string, run: AuthedRun) =>
        `  ${name}: chat p99 ${baseline.latencyMs.p99.toFixed(2)} ms → ${run.authedAttacked.latencyMs.p99.toFixed(2)} ms under ${under} ` +
        `(× ${p99Ratio(measured, () => run.authedAttacked).toFixed(2)}); ${run.authedAttackerCallsPerSec.toFixed(1)} calls/s, answered ${JSON.stringify(run.authedAttackerCodes)}`;
      const withLine = (run: AuthedRun) => `    with:    ${p(run.authedAttacked)} ms; loop delay ${describeDelays(run.authedLoopDelay)}`;
      options.log(ratioLine('the authenticated attacker', authed));
      options.log(`    without: ${p(baseline)} ms; loop delay ${describeDelays(baselineLoopDelay)}`);
      options.log(withLine(authed));
      options.log(ratioLine(`${COSTLIEST_ATTACK} alone`, costliest));
      options.log(withLine(costliest));
    } finally {
      await attacker.stop();
    }
  }
  const { log: _log, ...rest } = options;
  return {
    settings: { ...rest, ...placement },
    ...(warmupRound ? { warmupRound } : {}),
    rounds,
    summary: {
      baselineP99Ms: spread(rounds.map((r) => r.baseline.latencyMs.p99)),
      attackedP99Ms: spread(rounds.map((r) => HOSTILE_ROWS.keyless(r).latencyMs.p99)),
      p99Ratio: spread(rounds.map((r) => p99Ratio(r, HOSTILE_ROWS.keyless))),
      attackerCallsPerSec: spread(rounds.map((r) => r.attackerCallsPerSec)),
      authedAttackedP99Ms: spread(rounds.map((r) => HOSTILE_ROWS.authed(r).latencyMs.p99)),
      authedP99Ratio: spread(rounds.map((r) => p99Ratio(r, HOSTILE_ROWS.authed))),
      authedAttackerCallsPerSec: spread(rounds.map((r) => r.authedAttackerCallsPerSec)),
      costliestAttackedP99Ms: spread(rounds.map((r) => HOSTILE_ROWS.costliest(r).latencyMs.p99)),
      costliestP99Ratio: spread(rounds.map((r) => p99Ratio(r, HOSTILE_ROWS.costliest))),
    },
  };
}

/** The chat load while the authenticated attacker runs (`kinds` of its attacks, default all; with `key`, default `mallory`'s), and the codes it was answered with. */
async function underAuthenticatedAttacker(
  target: ReturnType<typeof gatewayChatLoad>,
  settings: { connections: number; durationSec: number },
  options: HostileOptions,
  httpUrl: string,
  grpcAddress: string,
  attackerPrefix: string[],
  servers: Servers,
  kinds?: string,
  key?: string,
): Promise<AuthedRun> {
  const attacker = await startAuthedAttacker(grpcAddress, httpUrl, options.attackLoops, attackerPrefix, kinds, key);
  try {
    type Stats = { calls: number; kinds: number; wanted: number; codes: Record<string, number>; events: TimedEvent[] };
    const before = await attacker.ask<Stats>('stats');
    await loopDelays(servers);
    if (options.explain) await serverTimelines(servers);
    const started = performance.now();
    const { answers, ...authedAttacked } = await fixedRate(target, { ...settings, answers: options.explain }, options.rate);
    const authedLoopDelay = await loopDelays(servers);
    let after = await attacker.ask<Stats>('stats');
    if (answers) {
      const lines = explainSlowest(answers, { attacker: after.events, ...(await serverTimelines(servers)) });
      for (const line of lines) options.log(line);
    }
    const authedAttackerCallsPerSec = (after.calls - before.calls) / ((performance.now() - started) / 1000);
    // A short run (smoke mode) waits until each attack run has had its answer, so the codes are real.
    await waitFor(
      'an answer to each authenticated attack',
      async () => ((after = await attacker.ask<Stats>('stats')), after.kinds >= after.wanted),
      120_000,
    );
    return { authedAttacked, authedAttackerCallsPerSec, authedAttackerCodes: after.codes, authedLoopDelay };
  } finally {
    await attacker.stop();
  }
}

/**
 * bench/servers/authed-attacker.ts with `loops` loops on `prefix` (the CPU split), of the kinds
 * `BENCH_ATTACK_KINDS` names (default all), with `key` (default `mallory`'s).
 */
export function startAuthedAttacker(
  grpcAddress: string,
  httpUrl: string,
  loops: number,
  prefix: string[],
  kinds?: string,
  key?: string,
): Promise<Child> {
  return startChild('authed-attacker', {
    script: 'bench/servers/authed-attacker.ts',
    env: {
      BENCH_ATTACK_TARGET: grpcAddress,
      BENCH_ATTACK_HTTP: httpUrl,
      BENCH_ATTACK_LOOPS: String(loops),
      ...(kinds ? { BENCH_ATTACK_KINDS: kinds } : {}),
      ...(key ? { BENCH_ATTACK_KEY: key } : {}),
    },
    prefix,
    waitReady: true,
    readyTimeoutMs: 120_000,
  });
}

/** Both servers' answers to one IPC request (bench/lib/loop-delay.mjs answers them). */
async function askServers<T>(servers: Servers, type: string): Promise<{ gateway: T; echo: T }> {
  const [gateway, echo] = await Promise.all([servers.gateway.ask<T>(type), servers.echo.ask<T>(type)]);
  return { gateway, echo };
}

/** The servers' stalls and collections since the last reading (bench/lib/loop-delay.mjs with BENCH_TIMELINE). */
export async function serverTimelines(servers: Servers): Promise<{ gateway: TimedEvent[]; echo: TimedEvent[] }> {
  const { gateway, echo } = await askServers<{ events: TimedEvent[] }>(servers, 'timeline');
  return { gateway: gateway.events, echo: echo.events };
}

/** The servers' loop delays since the last reading (and a fresh start for the next). */
export async function loopDelays(servers: Servers): Promise<ServerLoopDelays> {
  const { gateway, echo } = await askServers<LoopDelay>(servers, 'loop-delay');
  const pick = ({ p50, p99, max, markCompacts }: LoopDelay) => ({ p50, p99, max, markCompacts });
  return { gateway: pick(gateway), echo: pick(echo) };
}

function describeDelays(d: ServerLoopDelays): string {
  const one = (x: LoopDelay) => `p99 ${x.p99} max ${x.max} ms, ${x.markCompacts} mark-compacts`;
  return `gateway ${one(d.gateway)}, echo ${one(d.echo)}`;
}
