/** The results as Markdown tables (printed and saved next to the JSON) and the target verdicts. */
import type { BenchResults } from '../harness.js';
import { HTTP_TARGETS } from '../scenarios/http.js';
import { HOSTILE_ROWS, p99Ratio, type HostileRound } from '../scenarios/hostile.js';
import type { LoadResult } from './load.js';
import { FAIR_WORKER_CORES } from '../scenarios/workers.js';
import { spread, type Spread } from './stats.js';

export interface TargetVerdict {
  target: string;
  /** The measured figure (median over rounds where there are rounds). */
  value: string;
  met: boolean;
}

const f = (v: number, digits = 0) => (Number.isFinite(v) ? v.toFixed(digits) : '–');
/** `median [min–max]`, or just the value for a single round. */
const s = (x: Spread | undefined, digits = 0) => {
  if (!x || !Number.isFinite(x.median)) return '–';
  return x.values.length > 1 ? `${f(x.median, digits)} [${f(x.min, digits)}–${f(x.max, digits)}]` : f(x.median, digits);
};

/** Server-side CPU per request: the sum, then each process (the load generator apart). */
function cpu(perProcess: Record<string, number>): string {
  const servers = Object.entries(perProcess).filter(([k]) => k !== 'load generator');
  const total = servers.reduce((a, [, v]) => a + v, 0);
  return servers.length > 1 ? `${f(total)} (${servers.map(([k, v]) => `${k} ${f(v)}`).join(' + ')})` : f(total);
}

/** The hostile warm-up round's ratio for one row, when there was one: reported beside the verdict, not judged. */
function warmupRatio(round: HostileRound | undefined, row: (round: HostileRound) => LoadResult): string {
  return round ? `; the warm-up round, every attack's first run (not judged): × ${p99Ratio(round, row).toFixed(2)}` : '';
}

/** Verdicts of the issue's targets, from the figures of this run. */
export function verdicts(r: BenchResults): TargetVerdict[] {
  const out: TargetVerdict[] = [];
  if (r.http) {
    const { ours, 'ours-direct': direct } = r.http.targets;
    out.push({
      target: 'Gateway only (scenario 3) throughput ≥ 6× Portkey',
      value: `${s(ours.summary.rpsVsPeer, 1)}×`,
      met: ours.summary.rpsVsPeer.median >= 6,
    });
    out.push({
      target: 'One-process path (scenario 5) throughput ≥ 4× the peer',
      value: `${s(direct.summary.rpsVsPeer, 1)}×`,
      met: direct.summary.rpsVsPeer.median >= 4,
    });
    out.push({
      target: 'One-process path throughput ≥ 50% of the bare Node relay',
      value: `${s(direct.summary.rpsVsRelay, 2)}×`,
      met: direct.summary.rpsVsRelay.median >= 0.5,
    });
    out.push({
      target: 'One-process path throughput ≥ 10× LiteLLM',
      value: `${s(direct.summary.rpsVsLiteLlm, 1)}×`,
      met: direct.summary.rpsVsLiteLlm.median >= 10,
    });
    const gatewayCpu = direct.summary.cpuUsPerRequest.gateway;
    if (gatewayCpu !== undefined)
      out.push({ target: 'One-process path: gateway CPU ≤ 120 µs per request', value: `${f(gatewayCpu)} µs`, met: gatewayCpu <= 120 });
    // The better peer is the one with the lower p99: ours must be at most a fifth of it.
    for (const [label, t] of [
      ['One-process path', direct],
      ['Gateway only (scenario 3)', ours],
    ] as const) {
      // Of the peers that took part (LiteLLM's figure is NaN without it).
      const peers = [t.summary.p99PeerOverThis.median, t.summary.p99LiteLlmOverThis.median].filter(Number.isFinite);
      const better = peers.length ? Math.min(...peers) : NaN;
      out.push({
        target: `${label} p99 at the fixed rate ≤ 1/5 of the better peer's`,
        value: `better peer's p99 is ${f(better, 1)}× ours (Portkey ${s(t.summary.p99PeerOverThis, 1)}×, LiteLLM ${s(t.summary.p99LiteLlmOverThis, 1)}×)`,
        met: better >= 5,
      });
    }
  }
  if (r.streaming) {
    // What the gateway's logic adds beyond one more process on the path (the bare relay's stream).
    const h = r.streaming.summary.gatewayOverRelay;
    out.push({
      target: 'Streaming, beyond the bare relay: first chunk ≤ 1 ms at p99',
      value: `${s(h.firstChunkOverheadP99, 3)} ms`,
      met: h.firstChunkOverheadP99.median <= 1,
    });
    out.push({
      target: 'Streaming, beyond the bare relay: between chunks ≤ 0.5 ms at p99',
      value: `${s(h.deliveryP99, 3)} ms`,
      met: h.deliveryP99.median <= 0.5,
    });
  }
  if (r.validation) {
    const worst = Math.max(...r.validation.map((c) => c.totalUs.p99));
    out.push({ target: 'Registry validation + split p99 < 50 µs per request', value: `${f(worst, 1)} µs (slowest body)`, met: worst < 50 });
  }
  if (r.memory) {
    const o = r.memory.openStreams;
    // The issue's two points: 200 MB with 1,000 streams, 600 MB with 10,000.
    const rssTarget = o.opened > 1000 ? 600 : 200;
    out.push({
      target: `Gateway RSS ≤ ${rssTarget} MB with ${o.opened} open streams`,
      value: `${f(o.rssPeakMB, 1)} MB peak`,
      met: o.rssPeakMB <= rssTarget && o.reachedService === o.opened,
    });
    const d = r.memory.drift;
    const heapGrowth = d.heapEndMB - d.heapStartMB;
    const rssGrowth = d.rssLastThirdMB - d.rssFirstThirdMB;
    const signed = (v: number) => `${v >= 0 ? '+' : ''}${f(v, 1)}`;
    out.push({
      target: `No upward drift over a ${d.durationSec} s steady run (heap after GC grows < 2 MB, median RSS of the last third < first third + 5 MB)`,
      value: `heap ${signed(heapGrowth)} MB, RSS ${signed(rssGrowth)} MB`,
      met: heapGrowth < 2 && rssGrowth < 5 && d.errors === 0,
    });
  }
  if (r.hostile) {
    const codes = Object.keys(r.hostile.rounds.at(-1)?.attackerCodes ?? {});
    out.push({
      target:
        'Chat p99 under an unauthenticated attacker looping the largest allowed gRPC message ≤ 2 × without (same round); the attacker gets API_KEY_MISSING',
      value:
        `× ${f(r.hostile.summary.p99Ratio.median, 2)}; attacker answered ${codes.join(', ')}` +
        warmupRatio(r.hostile.warmupRound, HOSTILE_ROWS.keyless),
      met: r.hostile.summary.p99Ratio.median <= 2 && codes.includes('API_KEY_MISSING'),
    });
    const authedCodes = Object.keys(r.hostile.rounds.at(-1)?.authedAttackerCodes ?? {});
    const refused = (code: string) => authedCodes.some((c) => c.endsWith(`: ${code}`));
    out.push({
      target:
        'Chat p99 while another account sends maximal ext maps (gRPC and HTTP) and 30 MB Responses bodies ≤ 2 × without (same round); the floods get EXT_PARAMS_TOO_LARGE and JSON_TOO_MANY_MEMBERS',
      value:
        `× ${f(r.hostile.summary.authedP99Ratio.median, 2)}; attacker answered ${authedCodes.join(', ')}` +
        warmupRatio(r.hostile.warmupRound, HOSTILE_ROWS.authed),
      met: r.hostile.summary.authedP99Ratio.median <= 2 && refused('EXT_PARAMS_TOO_LARGE') && refused('JSON_TOO_MANY_MEMBERS'),
    });
    const costliestCodes = Object.keys(r.hostile.rounds.at(-1)?.costliest.authedAttackerCodes ?? {});
    out.push({
      target:
        'Chat p99 while another account sends only its costliest attack (served 4 MiB ext calls, every loop, at its full input rate) ≤ 2 × without (same round)',
      value:
        `× ${f(r.hostile.summary.costliestP99Ratio.median, 2)}; attacker answered ${costliestCodes.join(', ')}` +
        warmupRatio(r.hostile.warmupRound, HOSTILE_ROWS.costliest),
      met: r.hostile.summary.costliestP99Ratio.median <= 2,
    });
  }
  if (r.workers) {
    const w = r.workers;
    // Two workers beside the load generator and the echo service want about four cores; with fewer,
    // the second worker only gets what the others leave, and the figure says so rather than judge.
    const fewCores =
      w.cores < FAIR_WORKER_CORES
        ? `, fewer than the ${FAIR_WORKER_CORES} it needs (a core per worker, the load generator, the echo service): bound by the machine, not the gateway`
        : '';
    out.push({
      target: `2 workers ≥ 1.6× one worker's gateway-only throughput (${w.cores} cores, shared with the load generator and the echo service)`,
      value: `${s(w.summary.ratio, 2)}× on ${w.cores} cores${fewCores}`,
      met: w.summary.ratio.median >= 1.6,
    });
  }
  if (r.store) {
    const homes = r.store.homes;
    const embedded = homes.find((h) => h.home === 'embedded');
    out.push({
      target: 'Store: embedded task round trips ≥ 0.5 × the memory home (same run), no task lost or doubled under 4 claimers',
      value: `${f(r.store.embeddedVsMemory, 2)}×; lost ${homes.reduce((n, h) => n + h.lostTasks, 0)}, doubled ${homes.reduce((n, h) => n + h.doubledTasks, 0)}`,
      met: r.store.embeddedVsMemory >= 0.5 && homes.every((h) => h.lostTasks === 0 && h.doubledTasks === 0),
    });
    if (embedded) {
      out.push({
        target: 'Store: event-loop lag p99 < 20 ms while the embedded store is under load',
        value: `${f(embedded.loopLagP99Ms, 1)} ms`,
        met: embedded.loopLagP99Ms < 20,
      });
    }
  }
  return out;
}

export function markdown(r: BenchResults): string {
  const lines: string[] = [];
  const m = r.machine;
  lines.push(
    `Machine: ${m.cpuModel}, ${m.cores} cores, ${m.memoryGB} GB, Node ${m.node}, ${m.os}; load average at start ${m.loadAverageAtStart.join(' / ')} (shared machine).`,
  );
  lines.push(`Run: ${r.startedAt}, ${Math.round(r.elapsedSec)} s${r.smoke ? ' (smoke mode: figures mean nothing)' : ''}.`);
  if (r.http) {
    const h = r.http;
    const st = h.settings;
    lines.push('', `### HTTP chat completion (scenarios 1-4, the one-process path, the bare relay)`, '');
    lines.push(
      `autocannon, ${st.connections} connections, pipelining 1, ${st.durationSec} s per run after ${st.warmupSec} s warm-up, ${st.rounds} rounds; fixed rate ${st.rate} req/s. Median [min–max] over rounds; ratios are taken within each round.`,
      '',
    );
    if (st.litellm)
      lines.push(
        `LiteLLM ${st.litellm.version}: ${st.litellm.workers} workers, ${Object.entries(st.litellm.env)
          .map(([k, v]) => `${k}=${v}`)
          .join(' ')}, config:`,
        '',
        '```yaml',
        st.litellm.config.trimEnd(),
        '```',
        '',
      );
    lines.push(
      `| Target | Request / answer bytes | Saturation req/s | × Portkey | × LiteLLM | × bare relay | Server CPU µs/request | p50 ms @ ${st.rate}/s | p99 ms @ ${st.rate}/s | Portkey p99 ÷ p99 | LiteLLM p99 ÷ p99 |`,
    );
    lines.push('|---|---|---|---|---|---|---|---|---|---|---|');
    for (const name of HTTP_TARGETS) {
      const t = h.targets[name];
      if (!t) continue;
      lines.push(
        `| ${t.label} | ${t.requestBytes} / ${t.responseBodyBytes} | ${s(t.summary.rps)} | ${name === 'peer' ? '1' : s(t.summary.rpsVsPeer, 1)} | ${s(t.summary.rpsVsLiteLlm, 1)} | ${s(t.summary.rpsVsRelay, 2)} | ${cpu(t.summary.cpuUsPerRequest)} | ${s(t.summary.p50Ms, 2)} | ${s(t.summary.p99Ms, 2)} | ${name === 'peer' ? '1' : s(t.summary.p99PeerOverThis, 1)} | ${s(t.summary.p99LiteLlmOverThis, 1)} |`,
      );
    }
    const observed = h.targets['ours-observed'];
    if (observed) {
      const kib = (h.traceExports.bytes / 1024).toFixed(0);
      lines.push(
        '',
        `Metrics and tracing on (3b against 3, same round): ${s(observed.summary.rpsVsOurs, 2)}× the throughput of the default plugins; its gateway sent ${h.traceExports.exports} OTLP exports (${kib} KiB of spans) to the sink.`,
      );
    }
    const userSpace = h.targets['ours-userspace'];
    if (userSpace)
      lines.push(
        '',
        `User-space keys and budgets on (3c against 3, same round): ${s(userSpace.summary.rpsVsOurs, 2)}× the throughput of the default plugins (target: at least 0.95).`,
      );
  }
  if (r.streaming) {
    const st = r.streaming.settings;
    const sm = r.streaming.summary;
    lines.push('', '### Streaming (scenario 5)', '');
    lines.push(
      `${st.concurrency} concurrent streams (a quarter through each of our four paths, at the same time) of ${st.chunks} chunks, one every ${st.intervalMs} ms, ${st.durationSec} s per round, ${st.rounds} rounds. Overhead against the service's own timestamps, in ms; what a path adds is its figure minus the direct path's within each round.`,
      '',
    );
    if (st.litellm)
      lines.push(
        `LiteLLM ${st.litellm.version} (${st.litellm.workers} workers, the HTTP scenario's settings, the direct stream as its upstream) is read in a second sub-run of each round, as many streams as one of our paths, beside as many direct streams as its own baseline: it used ${s(r.streaming.litellmCpuMsPerStream, 1)} ms of CPU per stream, which would have taken CPU from our paths had it run with them.`,
        '',
      );
    lines.push('| Path | First chunk p50 | First chunk p99 | Between chunks (delivery) p50 | Between chunks (delivery) p99 |');
    lines.push('|---|---|---|---|---|');
    const row = (label: string, q: typeof sm.http) =>
      lines.push(
        `| ${label} | ${s(q.firstChunkOverheadP50, 3)} | ${s(q.firstChunkOverheadP99, 3)} | ${s(q.deliveryP50, 3)} | ${s(q.deliveryP99, 3)} |`,
      );
    row('ours: chat adapter (SSE)', sm.http);
    row('ours: gRPC processResponseStream', sm.grpc);
    row('direct from the service (SSE, no gateway)', sm.direct);
    row('bare Node relay → service', sm.relay);
    row('**ours, added (chat adapter − direct)**', sm.gatewayAdded);
    row('bare relay, added (relay − direct)', sm.relayAdded);
    row('ours beyond the bare hop (chat adapter − relay)', sm.gatewayOverRelay);
    row("adapter's own share (chat adapter − gRPC)", sm.adapterShare);
    if (st.litellm) {
      row('peer: LiteLLM proxy → service (its own sub-run)', sm.litellm);
      row('direct from the service, beside LiteLLM', sm.litellmBaseline);
      row('**LiteLLM, added (LiteLLM − direct beside it)**', sm.litellmAdded);
    }
  }
  if (r.grpc) {
    const g = r.grpc;
    lines.push('', '### gRPC `Gate.process` (scenario 6)', '');
    lines.push(
      `GateClient, ${g.settings.concurrency} calls in flight, ${g.settings.durationSec} s per run, ${g.settings.rounds} rounds.`,
      '',
    );
    lines.push('| Target | Calls/s | p50 ms | p99 ms | × ceiling |');
    lines.push('|---|---|---|---|---|');
    const row = (label: string, runs: typeof g.gateway, ratio: string) =>
      lines.push(
        `| ${label} | ${s(spread(runs.map((x) => x.rps)))} | ${s(spread(runs.map((x) => x.latencyMs.p50)), 2)} | ${s(spread(runs.map((x) => x.latencyMs.p99)), 2)} | ${ratio} |`,
      );
    row('grpc-js ceiling (answers at once)', g.ceiling, '1');
    row('gateway → echo service', g.gateway, s(g.summary.gatewayVsCeiling, 2));
  }
  if (r.validation) {
    lines.push('', '### Validation and split (scenario 7)', '');
    lines.push('Per request, µs, p50 / p99 (body check + split + registry check; JSON.parse of the body apart).', '');
    lines.push('| Body | Bytes | Total | Body check | Split | Registry | (JSON.parse) |');
    lines.push('|---|---|---|---|---|---|---|');
    const pq = (x: { p50: number; p99: number }) => `${f(x.p50, 1)} / ${f(x.p99, 1)}`;
    for (const c of r.validation)
      lines.push(
        `| ${c.name} | ${c.bodyBytes} | ${pq(c.totalUs)} | ${pq(c.checkUs)} | ${pq(c.splitUs)} | ${pq(c.registryUs)} | ${pq(c.parseUs)} |`,
      );
  }
  if (r.memory) {
    const o = r.memory.openStreams;
    const d = r.memory.drift;
    lines.push('', '### Memory (scenario 8)', '');
    lines.push(`| Measure | Value |`, '|---|---|');
    lines.push(
      `| RSS before the streams (after the earlier scenarios) → with ${o.opened} open (peak) | ${o.rssBeforeMB} → ${o.rssOpenMB} MB (${o.rssPeakMB} MB) |`,
    );
    lines.push(`| Per open stream | ${o.perStreamKB} KB of heap |`);
    lines.push(`| Heap after GC idle → open → closed | ${o.heapBeforeMB} → ${o.heapOpenMB} → ${o.heapAfterCloseMB} MB |`);
    lines.push(
      `| Streams that reached the service / cancelled after close | ${o.reachedService} / ${o.cancelledAfterClose ? 'all' : 'not all'} |`,
    );
    lines.push(
      `| Steady run | ${d.durationSec} s at ${r.memory.settings.driftRate} req/s (plain and streamed alternating), ${d.requests} answers, ${d.errors} errors |`,
    );
    lines.push(`| RSS start → end (max) | ${d.rssStartMB} → ${d.rssEndMB} MB (${d.rssMaxMB} MB) |`);
    lines.push(
      `| Median RSS, first third → last third | ${d.rssFirstThirdMB} → ${d.rssLastThirdMB} MB (slope over the run ${d.rssSlopeMBPerMin} MB/min) |`,
    );
    lines.push(`| Heap after GC start → end | ${d.heapStartMB} → ${d.heapEndMB} MB |`);
  }
  if (r.hostile) {
    const h = r.hostile;
    const last = h.rounds.at(-1);
    lines.push('', '### Under an unauthenticated gRPC attacker (scenario 9)', '');
    lines.push(
      `Chat adapter at ${h.settings.rate} req/s, ${h.settings.connections} connections, ${h.settings.durationSec} s per run, without then with ${h.settings.attackLoops} attacker loops sending the largest \`Gate.process\` message the client limits allow (${last?.attackerMessageBytes ?? '?'} bytes, no authToken); ${h.settings.rounds} rounds, ratio within each round (target ≤ 2)${(h.settings.echoInstances ?? 1) > 1 ? `; the echo service as ${h.settings.echoInstances} instances in one process (\`--echo-instances\`)` : ''}.`,
      '',
    );
    lines.push('| Measure | Value |', '|---|---|');
    lines.push(`| Chat p99 without → with the attacker | ${s(h.summary.baselineP99Ms, 2)} → ${s(h.summary.attackedP99Ms, 2)} ms |`);
    lines.push(`| p99 with ÷ without | ${s(h.summary.p99Ratio, 2)} |`);
    lines.push(
      `| Attacker calls/s; answers (last round) | ${s(h.summary.attackerCallsPerSec)}; ${Object.entries(last?.attackerCodes ?? {})
        .map(([k, n]) => `${k} × ${n}`)
        .join(', ')} |`,
    );
    lines.push(
      `| Chat p99 with the authenticated attacker (maximal ext maps, 30 MB Responses bodies) | ${s(h.summary.authedAttackedP99Ms, 2)} ms |`,
    );
    lines.push(`| p99 with it ÷ without | ${s(h.summary.authedP99Ratio, 2)} |`);
    lines.push(
      `| Authenticated attacker calls/s; answers (last round) | ${s(h.summary.authedAttackerCallsPerSec, 1)}; ${Object.entries(
        last?.authedAttackerCodes ?? {},
      )
        .map(([k, n]) => `${k} × ${n}`)
        .join(', ')} |`,
    );
    lines.push(
      `| Chat p99 with the same account sending only its costliest attack (served 4 MiB ext calls) | ${s(h.summary.costliestAttackedP99Ms, 2)} ms |`,
    );
    lines.push(`| p99 with it ÷ without | ${s(h.summary.costliestP99Ratio, 2)} |`);
    const delay = (pick: (round: (typeof h.rounds)[number]) => number) => s(spread(h.rounds.map(pick)), 1);
    lines.push(
      `| Event-loop delay p99 / max without → with the authenticated attacker, gateway | ${delay((x) => x.baselineLoopDelay.gateway.p99)} / ${delay((x) => x.baselineLoopDelay.gateway.max)} → ${delay((x) => x.authedLoopDelay.gateway.p99)} / ${delay((x) => x.authedLoopDelay.gateway.max)} ms |`,
    );
    lines.push(
      `| the same, echo service | ${delay((x) => x.baselineLoopDelay.echo.p99)} / ${delay((x) => x.baselineLoopDelay.echo.max)} → ${delay((x) => x.authedLoopDelay.echo.p99)} / ${delay((x) => x.authedLoopDelay.echo.max)} ms |`,
    );
    lines.push(`| CPUs | ${h.settings.cpuSplit} |`);
  }
  if (r.workers) {
    const w = r.workers;
    const st = w.settings;
    lines.push('', '### Workers: 1 vs 2 (`server.workers`)', '');
    lines.push(
      `Two gateways as \`npm start\` runs them (compiled), ${st.path}; autocannon, ${st.connections} connections, ${st.durationSec} s per run after ${st.warmupSec} s warm-up, ${st.rounds} rounds alternating. ${w.cores} cores shared by the load generator, the echo services and the gateways. Median [min–max]; the ratio is taken within each round.`,
      '',
    );
    lines.push('| Gateway | Saturation req/s | p99 ms | Gateway CPU µs/request (primary + workers) | Echo CPU µs/request |');
    lines.push('|---|---|---|---|---|');
    const row = (label: string, runs: typeof w.runs.oneWorker, rps: Spread, gatewayCpu: Spread) =>
      lines.push(
        `| ${label} | ${s(rps)} | ${s(spread(runs.map((x) => x.latencyMs.p99)), 2)} | ${s(gatewayCpu)} | ${s(spread(runs.map((x) => x.cpuUsPerRequest.echo)))} |`,
      );
    row('1 worker', w.runs.oneWorker, w.summary.oneWorkerRps, w.summary.gatewayCpuUs.oneWorker);
    row('2 workers', w.runs.twoWorkers, w.summary.twoWorkersRps, w.summary.gatewayCpuUs.twoWorkers);
    lines.push(`| **2 workers ÷ 1** | ${s(w.summary.ratio, 2)}× | | | |`);
  }
  if (r.store) {
    const st = r.store.settings;
    lines.push('', '### Store homes (the store port)', '');
    lines.push(
      `In one process: ${st.tasks} async tasks created while 4 claimers (each on its own handle to the store) claim, complete and read them; as many queued first, then claimed one at a time (a backlog); ${st.responses} stored responses written then read; ${st.usageIncrements} usage increments. MongoDB (when available) runs a quarter of the tasks.`,
      '',
    );
    lines.push(
      '| Home | Task round trips/s | Claim p99 ms | Claim from a backlog, mean (p99) ms | Lost / doubled | Responses written/s | read/s | Usage increments/s | Loop lag p99 (max) ms |',
    );
    lines.push('|---|---|---|---|---|---|---|---|---|');
    for (const h of r.store.homes) {
      lines.push(
        `| ${h.home} | ${f(h.taskRoundTripsPerSec, 0)} | ${f(h.claimP99Ms, 2)} | ${f(h.backlogClaimMeanMs, 2)} (${f(h.backlogClaimP99Ms, 2)}) | ${h.lostTasks} / ${h.doubledTasks} | ${f(h.responseWritesPerSec, 0)} | ${f(h.responseReadsPerSec, 0)} | ${f(h.usageIncrementsPerSec, 0)} | ${f(h.loopLagP99Ms, 1)} (${f(h.loopLagMaxMs, 1)}) |`,
      );
    }
  }
  const v = verdicts(r);
  if (v.length) {
    lines.push('', '### Targets', '', '| Target | This run | Met |', '|---|---|---|');
    for (const t of v) lines.push(`| ${t.target} | ${t.value} | ${t.met ? 'yes' : '**no**'} |`);
  }
  return lines.join('\n');
}
