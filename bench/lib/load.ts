/**
 * HTTP load with autocannon (run in the harness process; the servers under test are children).
 * Every target gets the same settings: connections, duration, pipelining 1, body and headers.
 *
 * - saturate(): closed loop, every connection sends its next request when the previous answer is
 *   in: the most the target serves.
 * - fixedRate(): the same connections, each sending on its own evenly spaced schedule so that all
 *   together offer `rate` requests per second. autocannon's own `overallRate` lets each connection
 *   send its whole per-second quota back to back at the start of every second (bursts of
 *   `connections` requests), which measures queueing in the burst rather than latency at a rate;
 *   the pacing here wraps autocannon's client send (setupClient hook) and changes nothing else.
 *
 * Latencies come from autocannon's per-response events (hrtime, fractions of a millisecond), not
 * its histogram, which keeps whole milliseconds only.
 */
import autocannon, { type AutocannonClient, type AutocannonRequest, type AutocannonResult } from 'autocannon';
import { Samples } from './stats.js';

export interface LoadTarget {
  url: string;
  /** One request, or a sequence each connection cycles through. */
  requests: AutocannonRequest[];
}

export interface LoadSettings {
  connections: number;
  durationSec: number;
  /** Keep every 2xx answer's time and latency (`LoadResult.answers`), for `--explain`. */
  answers?: boolean;
}

/** One 2xx answer: when it came (wall-clock ms) and how long it took (ms). */
export interface TimedAnswer {
  end: number;
  ms: number;
}

export interface LoadResult {
  /** 2xx answers per second over the run. */
  rps: number;
  /** Offered rate for fixed-rate runs. */
  offeredRps?: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number };
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** Mean bytes per response (headers and body). */
  bytesPerResponse: number;
  durationSec: number;
  /** With `settings.answers`: every 2xx answer, in the order they came. */
  answers?: TimedAnswer[];
}

export function saturate(target: LoadTarget, settings: LoadSettings): Promise<LoadResult> {
  return run(target, settings);
}

export function fixedRate(target: LoadTarget, settings: LoadSettings, rate: number): Promise<LoadResult> {
  return run(target, settings, rate);
}

function run(target: LoadTarget, settings: LoadSettings, rate?: number): Promise<LoadResult> {
  const latencies = new Samples();
  let bytes = 0;
  let index = 0;
  const answers: TimedAnswer[] | undefined = settings.answers ? [] : undefined;
  const start = performance.now();
  const setupClient = rate ? (client: AutocannonClient) => pace(client, start, index++, settings.connections, rate) : undefined;
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: target.url,
        requests: target.requests,
        connections: settings.connections,
        duration: settings.durationSec,
        pipelining: 1,
        timeout: 30,
        setupClient,
      },
      (err, result: AutocannonResult) => {
        if (err) return reject(err);
        const [p50, p90, p99, max] = latencies.percentiles(50, 90, 99, 100);
        const ok = result['2xx'];
        resolve({
          rps: ok / result.duration,
          offeredRps: rate,
          latencyMs: { p50: p50!, p90: p90!, p99: p99!, max: max! },
          ok,
          non2xx: result.non2xx,
          errors: result.errors,
          timeouts: result.timeouts,
          bytesPerResponse: latencies.length ? bytes / latencies.length : 0,
          durationSec: result.duration,
          ...(answers ? { answers } : {}),
        });
      },
    );
    instance.on('response', (_client: unknown, statusCode: number, resBytes: number, responseTime: number) => {
      if (statusCode >= 200 && statusCode < 300) {
        latencies.push(responseTime);
        answers?.push({ end: performance.timeOrigin + performance.now(), ms: responseTime });
        bytes += resBytes;
      }
    });
  });
}

/**
 * Connection `i` of `n` sends at start + (i/n + k) × n/rate for k = 0, 1, …: together `rate` per
 * second, evenly spread. A connection whose answer comes after its next slot sends at once (it
 * cannot have two requests in flight with pipelining 1), so a saturated target shows up as an
 * achieved rate below the offered one.
 */
function pace(client: AutocannonClient, start: number, i: number, n: number, rate: number): void {
  const interval = (1000 * n) / rate;
  let next = start + (i * interval) / n;
  const send = client._doRequest.bind(client);
  client._doRequest = () => {
    if (client.destroyed) return;
    const now = performance.now();
    const slot = next;
    next = Math.max(slot, now) + interval;
    if (slot <= now) send();
    else setTimeout(() => client.destroyed || send(), slot - now);
  };
}
