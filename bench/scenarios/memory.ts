/**
 * Scenario 8: the gateway's memory.
 *
 * - Open streams: `streams` SSE streams through the chat adapter held open at once by a slow
 *   streaming service (its own process; a chunk every `tickMs`, never finishing). RSS of the gateway
 *   process (from /proc) before, while every stream is open, and after they are closed; heap after a
 *   forced collection at the same points. The service's count of live requests checks that every
 *   stream really reached it and that every close came back to it as a cancel.
 * - Drift: a steady load for `driftSec` (autocannon at a fixed rate; each connection alternates a
 *   plain and a streamed chat completion to the echo service), RSS sampled every second, heap after
 *   a forced collection at the start and the end. Drift is the heap growth between the two
 *   collections (what leaks), and the median RSS of the last third of the run against the first
 *   third (RSS saws up and down with the collector, so a slope over a minute is mostly the saw).
 */
import http from 'node:http';
import { chatRequest, gatewayHeaders } from '../lib/config.js';
import { fixedRate } from '../lib/load.js';
import { median, slope } from '../lib/stats.js';
import type { Systems } from '../lib/systems.js';

export interface MemoryOptions {
  streams: number;
  tickMs: number;
  holdSec: number;
  driftSec: number;
  driftRate: number;
  connections: number;
  log: (line: string) => void;
}

interface Mem {
  rss: number;
  heapUsed: number;
  external: number;
}

export interface MemoryResult {
  settings: Omit<MemoryOptions, 'log'>;
  openStreams: {
    opened: number;
    reachedService: number;
    cancelledAfterClose: boolean;
    rssBeforeMB: number;
    rssOpenMB: number;
    rssPeakMB: number;
    rssAfterCloseMB: number;
    heapBeforeMB: number;
    heapOpenMB: number;
    heapAfterCloseMB: number;
    /** Heap (after a collection) per open stream. */
    perStreamKB: number;
  };
  drift: {
    durationSec: number;
    requests: number;
    errors: number;
    samples: [number, number][];
    rssStartMB: number;
    rssEndMB: number;
    rssMaxMB: number;
    /** Median RSS of the first and the last third of the run. */
    rssFirstThirdMB: number;
    rssLastThirdMB: number;
    /** Least-squares slope of RSS over the run, MB per minute (informational). */
    rssSlopeMBPerMin: number;
    heapStartMB: number;
    heapEndMB: number;
  };
}

const MB = 1024 * 1024;
const mb = (bytes: number) => Math.round((bytes / MB) * 10) / 10;

export async function runMemory(systems: Systems, options: MemoryOptions): Promise<MemoryResult> {
  const gateway = await systems.gateway();
  const { httpUrl } = await systems.gatewayUrls();
  const [slow] = await Promise.all([systems.ticker('slow', options.tickMs, 0), systems.echo()]);
  const mem = async (): Promise<Mem> => {
    const m = await gateway.ask<Mem>('mem');
    return { rss: gateway.rss(), heapUsed: m.heapUsed, external: m.external };
  };
  const active = async () => (await slow.ask<{ active: number }>('active')).active;

  // --- open streams
  const before = await mem();
  const url = new URL(`${httpUrl}/api/adapters/chatapi/v1/chat/completions`);
  const body = JSON.stringify(chatRequest('bench/slow', { stream: true }));
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  const requests: http.ClientRequest[] = [];
  const open = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const req = http.request(url, {
        method: 'POST',
        agent,
        headers: { ...gatewayHeaders(), 'content-length': Buffer.byteLength(body) },
      });
      requests.push(req);
      req.on('response', (res) => {
        if (res.statusCode !== 200) return reject(new Error(`stream answered ${res.statusCode}`));
        res.once('data', () => resolve());
        res.on('data', () => {});
        res.on('error', () => {});
      });
      req.on('error', (err) => (requests.includes(req) ? reject(err) : undefined));
      req.end(body);
    });
  // Opened in batches so that connects do not time out on two cores.
  for (let i = 0; i < options.streams; i += 100) {
    await Promise.all(Array.from({ length: Math.min(100, options.streams - i) }, open));
  }
  options.log(`  ${options.streams} streams open`);
  let peak = gateway.rss();
  const holdUntil = performance.now() + options.holdSec * 1000;
  while (performance.now() < holdUntil) {
    await new Promise((r) => setTimeout(r, 250));
    peak = Math.max(peak, gateway.rss());
  }
  const reached = await active();
  const opened = await mem();
  peak = Math.max(peak, opened.rss);
  for (const req of requests.splice(0)) req.destroy();
  agent.destroy();
  let left = reached;
  const deadline = performance.now() + 15_000;
  while ((left = await active()) > 0 && performance.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  await new Promise((r) => setTimeout(r, Math.min(1000, options.holdSec * 1000)));
  const after = await mem();
  options.log(
    `  open streams: RSS ${mb(before.rss)} → ${mb(opened.rss)} MB (peak ${mb(peak)}), heap ${mb(before.heapUsed)} → ${mb(opened.heapUsed)} MB; after close RSS ${mb(after.rss)} MB, ${left} left at the service`,
  );

  // --- drift
  const target = {
    url: url.href,
    requests: [
      { method: 'POST', headers: gatewayHeaders(), body: JSON.stringify(chatRequest('bench/echo')) },
      { method: 'POST', headers: gatewayHeaders(), body: JSON.stringify(chatRequest('bench/echo', { stream: true })) },
    ],
  };
  const settings = { connections: options.connections, durationSec: options.driftSec };
  // Warm-up at the same load, so the start reading is of a warm process.
  await fixedRate(target, { ...settings, durationSec: Math.min(5, options.driftSec / 6) }, options.driftRate);
  const start = await mem();
  const samples: [number, number][] = [];
  const t0 = performance.now();
  // Every second; a dozen samples at least on a short run.
  const sampler = setInterval(
    () => samples.push([Math.round((performance.now() - t0) / 100) / 10, mb(gateway.rss())]),
    Math.min(1000, (options.driftSec * 1000) / 12),
  );
  const load = await fixedRate(target, settings, options.driftRate);
  clearInterval(sampler);
  const end = await mem();
  const rssSlope = slope(
    samples.map(([t]) => t / 60),
    samples.map(([, v]) => v),
  );
  const third = (from: number, to: number) => median(samples.filter(([t]) => t >= from && t < to).map(([, v]) => v));
  const firstThird = third(0, options.driftSec / 3);
  const lastThird = third((2 * options.driftSec) / 3, Infinity);
  options.log(
    `  drift over ${options.driftSec} s at ${options.driftRate} req/s: RSS ${mb(start.rss)} → ${mb(end.rss)} MB (median of first third ${firstThird}, of last third ${lastThird}), heap after GC ${mb(start.heapUsed)} → ${mb(end.heapUsed)} MB`,
  );
  const { log: _log, ...rest } = options;
  return {
    settings: rest,
    openStreams: {
      opened: options.streams,
      reachedService: reached,
      cancelledAfterClose: left === 0,
      rssBeforeMB: mb(before.rss),
      rssOpenMB: mb(opened.rss),
      rssPeakMB: mb(peak),
      rssAfterCloseMB: mb(after.rss),
      heapBeforeMB: mb(before.heapUsed),
      heapOpenMB: mb(opened.heapUsed),
      heapAfterCloseMB: mb(after.heapUsed),
      // Heap after a collection: RSS before the streams still holds what the previous load grew.
      perStreamKB: Math.round(((opened.heapUsed - before.heapUsed) / options.streams / 1024) * 10) / 10,
    },
    drift: {
      durationSec: options.driftSec,
      requests: load.ok,
      errors: load.non2xx + load.errors + load.timeouts,
      samples,
      rssStartMB: mb(start.rss),
      rssEndMB: mb(end.rss),
      rssMaxMB: Math.max(...samples.map(([, v]) => v), mb(end.rss)),
      rssFirstThirdMB: firstThird,
      rssLastThirdMB: lastThird,
      rssSlopeMBPerMin: Math.round(rssSlope * 100) / 100,
      heapStartMB: mb(start.heapUsed),
      heapEndMB: mb(end.heapUsed),
    },
  };
}
