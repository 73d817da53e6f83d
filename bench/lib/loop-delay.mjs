/**
 * For the processes under test (our gateway, the echo service): the event loop's delay, sampled every
 * 10 ms (perf_hooks' monitorEventLoopDelay), answered and reset on an IPC `loop-delay` request. The
 * hostile scenario reads it around each run to tell a gateway that blocks its own loop from latency
 * made elsewhere (a busy CPU, a service's stream). Plain JavaScript: the compiled gateway imports it,
 * and the echo service loads it with `--import` (it is the demo service, unchanged).
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';

const RESOLUTION_MS = 10;
const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
histogram.enable();
// The histogram records the time between samples, the 10 ms interval included: the delay is what is past it.
const ms = (ns) => Math.max(0, Math.round(ns / 1e4 - RESOLUTION_MS * 100) / 100);

process.on('message', (message) => {
  if (message?.type !== 'loop-delay') return;
  process.send?.({
    type: 'loop-delay',
    p50: ms(histogram.percentile(50)),
    p99: ms(histogram.percentile(99)),
    max: ms(histogram.max),
    samples: histogram.count,
  });
  histogram.reset();
});
