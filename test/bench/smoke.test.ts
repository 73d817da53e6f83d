/**
 * The benchmark harness in smoke mode: every scenario runs for a moment against real processes, so
 * the harness cannot rot. Only the shape of the results is checked, never a timing. The test
 * installs nothing: LiteLLM, the second peer (about 750 MB), is installed by .ci/run; without it the
 * LiteLLM part is skipped with one line (a failure under CI=true) and the rest runs.
 */
import { describe, expect, it } from 'vitest';
import { SMOKE_OPTIONS, runBench } from '../../bench/harness.js';
import { markdown, verdicts } from '../../bench/lib/report.js';
import { liteLlmInstalled } from '../../bench/peers/litellm.js';
import { HTTP_TARGETS } from '../../bench/scenarios/http.js';
import { STREAM_PATHS } from '../../bench/scenarios/streaming.js';
import { requirePrerequisite } from '../support/prerequisites.js';

const positive = (v: number) => Number.isFinite(v) && v > 0;

describe('bench harness (smoke mode)', () => {
  it('runs every scenario and produces well-formed results', async () => {
    const lines: string[] = [];
    const withLiteLlm = requirePrerequisite('bench smoke test, LiteLLM peer', liteLlmInstalled());
    const r = await runBench({ ...SMOKE_OPTIONS, withLiteLlm, log: (line) => lines.push(line) });
    if (process.env.BENCH_DEBUG) process.stderr.write(lines.join('\n'));

    expect(r.machine.cores).toBeGreaterThan(0);
    expect(r.machine.node).toBe(process.version);

    const httpTargets = HTTP_TARGETS.filter((name) => withLiteLlm || name !== 'litellm');
    expect(Object.keys(r.http!.targets).sort()).toEqual([...httpTargets].sort());
    for (const name of httpTargets) {
      const t = r.http!.targets[name]!;
      expect(t.responseBodyBytes, name).toBeGreaterThan(0);
      for (const run of [...t.saturation, ...t.fixedRate]) {
        expect(positive(run.rps), name).toBe(true);
        expect(run.non2xx + run.errors + run.timeouts, name).toBe(0);
        expect(positive(run.latencyMs.p50) && run.latencyMs.p99 >= run.latencyMs.p50, name).toBe(true);
      }
      expect(Object.keys(t.saturation[0]!.cpuUsPerRequest)).toContain('load generator');
    }
    expect(r.http!.targets.peer.responseBodyBytes).toBe(r.http!.targets.ceiling.responseBodyBytes);
    // 3b runs with tracing on: its spans reached the sink.
    expect(r.http!.traceExports.exports).toBeGreaterThan(0);
    expect(r.http!.targets.relay.responseBodyBytes).toBe(r.http!.targets.ceiling.responseBodyBytes);

    const streamPaths = STREAM_PATHS.filter((path) => withLiteLlm || !path.startsWith('litellm'));
    expect(Object.keys(r.streaming!.rounds[0]!).sort()).toEqual([...streamPaths].sort());
    for (const path of streamPaths) {
      const s = r.streaming!.rounds[0]![path];
      expect(s.streams, path).toBeGreaterThan(0);
      expect(s.chunks, path).toBeGreaterThan(s.streams);
      expect(Number.isFinite(s.firstChunkOverheadMs.p99) && Number.isFinite(s.deliveryMs.p99), path).toBe(true);
    }

    for (const run of [...r.grpc!.ceiling, ...r.grpc!.gateway]) {
      expect(positive(run.rps)).toBe(true);
      expect(run.errors).toBe(0);
    }

    expect(r.validation!.map((c) => c.name)).toEqual(['minimal', 'typical', 'conversation', 'tools', 'long']);
    for (const c of r.validation!) expect(positive(c.totalUs.p50) && c.totalUs.p99 >= c.totalUs.p50, c.name).toBe(true);

    const o = r.memory!.openStreams;
    expect(o.reachedService).toBe(o.opened);
    expect(o.cancelledAfterClose).toBe(true);
    expect(positive(o.rssOpenMB)).toBe(true);
    expect(r.memory!.drift.requests).toBeGreaterThan(0);
    expect(r.memory!.drift.errors).toBe(0);

    const h = r.hostile!;
    expect(h.rounds).toHaveLength(1);
    expect(h.rounds[0]!.attackerCodes.API_KEY_MISSING).toBeGreaterThan(0);
    expect(h.rounds[0]!.attackerMessageBytes).toBeGreaterThan(4_000_000);
    expect(Number.isFinite(h.summary.p99Ratio.median)).toBe(true);
    // The authenticated attacker (#25 N1): its floods are refused with their codes, the largest allowed ext map is served.
    const authed = h.rounds[0]!.authedAttackerCodes;
    expect(authed['grpc-ext-flood: EXT_PARAMS_TOO_LARGE']).toBeGreaterThan(0);
    // An HTTP flood is refused from its first kilobytes and the rest of its body drained (up to
    // server.refusedBodyDrainBytes, then the connection is half-closed after the answer): the attacker
    // reads the coded answer, never a reset (#25; it saw `fetch failed` for one flood in two before).
    const refusedOverHttp = (kind: string, code: string) => {
      const outcomes = Object.keys(authed).filter((outcome) => outcome.startsWith(`${kind}: `));
      expect(outcomes, kind).toEqual([`${kind}: ${code}`]);
    };
    refusedOverHttp('http-ext-flood', 'EXT_PARAMS_TOO_LARGE');
    refusedOverHttp('http-responses', 'JSON_TOO_MANY_MEMBERS');
    expect(Number.isFinite(h.summary.authedP99Ratio.median)).toBe(true);
    // The same account with only its costliest kind: the largest allowed ext map, served (the echo service does not know the method).
    expect(Object.keys(h.rounds[0]!.costliest.authedAttackerCodes)).toEqual(['grpc-ext-max: platform-action.common.method-not-supported']);
    expect(Number.isFinite(h.summary.costliestP99Ratio.median)).toBe(true);

    // Workers: both gateways served every request of their round, the ratio is theirs, the cores are the machine's.
    const w = r.workers!;
    expect(w.cores).toBe(r.machine.cores);
    for (const [key, runs] of Object.entries(w.runs)) {
      expect(runs, key).toHaveLength(1);
      for (const run of runs) {
        expect(positive(run.rps), key).toBe(true);
        expect(run.non2xx + run.errors + run.timeouts, key).toBe(0);
        expect(positive(run.cpuUsPerRequest.gateway), key).toBe(true);
      }
    }
    expect(w.summary.ratio.median).toBeCloseTo(w.runs.twoWorkers[0]!.rps / w.runs.oneWorker[0]!.rps, 6);

    // Store: every home in the run moved every task once, and measured each figure.
    const homes = r.store!.homes;
    expect(homes.map((h) => h.home)).toEqual(expect.arrayContaining(['memory', 'embedded']));
    for (const h of homes) {
      expect(h.lostTasks + h.doubledTasks, h.home).toBe(0);
      expect(positive(h.taskRoundTripsPerSec) && positive(h.responseWritesPerSec) && positive(h.usageIncrementsPerSec), h.home).toBe(true);
      expect(positive(h.backlogClaimMeanMs) && positive(h.backlogClaimP99Ms), h.home).toBe(true);
    }

    const targets = verdicts(r).map((v) => v.target);
    // 14, the hostile scenario's second and third (the authenticated attacker, all kinds and the costliest alone), and the store scenario's two.
    expect(targets).toHaveLength(18);
    // The workers verdict names the core count in its target and its value.
    const workers = verdicts(r).find((v) => v.target.startsWith('2 workers ≥ 1.6× one worker'))!;
    expect(workers.target).toContain(`(${w.cores} cores, shared with the load generator and the echo service)`);
    expect(workers.value).toContain(`on ${w.cores} cores`);
    // The figures: 6× Portkey gateway-only, 120 µs on the one-process path, 0.5 ms between chunks, 200 MB at 1,000 streams.
    expect(targets).toEqual(
      expect.arrayContaining([
        expect.stringContaining('≥ 6× Portkey'),
        expect.stringContaining('≤ 120 µs'),
        expect.stringContaining('between chunks ≤ 0.5 ms'),
        expect.stringMatching(/RSS ≤ 200 MB/),
      ]),
    );
    expect(markdown(r)).toContain('### Targets');
    expect(markdown(r)).toContain('### Workers: 1 vs 2');
    expect(markdown(r)).toContain('### Store homes');
  }, 180_000);
});
