/**
 * For the processes under test (our gateway, the echo service): the event loop's delay, sampled every
 * 10 ms (perf_hooks' monitorEventLoopDelay), answered and reset on an IPC `loop-delay` request. The
 * hostile scenario reads it around each run to tell a gateway that blocks its own loop from latency
 * made elsewhere (a busy CPU, a service's stream). Plain JavaScript: the compiled gateway imports it,
 * and the echo service loads it with `--import` (it is the demo service, unchanged).
 */
import { PerformanceObserver, constants, monitorEventLoopDelay, performance } from 'node:perf_hooks';

const RESOLUTION_MS = 10;
const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
histogram.enable();
// The histogram records the time between samples, the 10 ms interval included: the delay is what is past it.
const ms = (ns) => Math.max(0, Math.round(ns / 1e4 - RESOLUTION_MS * 100) / 100);
/**
 * Mark-compacts since the last reading: each one stalls the loop for a while (its marking steps and
 * its pause), and what a process keeps outside its heap (Buffers) can start them (issue 25).
 */
let markCompacts = 0;
/** Each collection's entry, for the timeline below when it is on. */
let recordGc;
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    if (entry.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) markCompacts++;
    recordGc?.(entry);
  }
}).observe({ entryTypes: ['gc'] });

process.on('message', (message) => {
  if (message?.type !== 'loop-delay') return;
  process.send?.({
    type: 'loop-delay',
    p50: ms(histogram.percentile(50)),
    p99: ms(histogram.percentile(99)),
    max: ms(histogram.max),
    samples: histogram.count,
    markCompacts,
  });
  histogram.reset();
  markCompacts = 0;
});

/**
 * With BENCH_TIMELINE set (`npm run bench -- --explain`): a timeline of the process's event-loop
 * stalls and garbage collections, with wall-clock times, answered and emptied on an IPC `timeline`
 * request, so the hostile scenario can say what each server was doing while the slowest requests
 * waited. A 2 ms timer finds the stalls; it costs the process a little, so it is off unless asked for.
 */
if (process.env.BENCH_TIMELINE) {
  const { setInterval } = await import('node:timers');
  const STALL_TICK_MS = 2;
  const STALL_MIN_MS = 6;
  const KEPT = 20_000;
  const now = () => performance.timeOrigin + performance.now();
  const gcKinds = {
    [constants.NODE_PERFORMANCE_GC_MAJOR]: 'mark-compact',
    [constants.NODE_PERFORMANCE_GC_MINOR]: 'scavenge',
    [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental marking',
    [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak callbacks',
  };
  /** Why V8 collected, where it says (the callback flags a collection carries). */
  const gcReasons = [
    [constants.NODE_PERFORMANCE_GC_FLAGS_FORCED, 'forced'],
    [constants.NODE_PERFORMANCE_GC_FLAGS_ALL_EXTERNAL_MEMORY, 'external memory'],
    [constants.NODE_PERFORMANCE_GC_FLAGS_ALL_AVAILABLE_GARBAGE, 'all available garbage'],
    [constants.NODE_PERFORMANCE_GC_FLAGS_SCHEDULE_IDLE, 'idle'],
  ];
  const MB = 1024 * 1024;
  /**
   * A mark-compact also tells its reason and the heap it left (heap used, memory outside the heap such
   * as Buffers), to say what started it: the old generation's growth or external memory.
   */
  const gcKind = (detail) => {
    const kind = gcKinds[detail?.kind] ?? 'gc';
    if (detail?.kind !== constants.NODE_PERFORMANCE_GC_MAJOR) return kind;
    const reasons = gcReasons.filter(([flag]) => (detail.flags & flag) !== 0).map(([, name]) => name);
    const { heapUsed, external } = process.memoryUsage();
    const after = `heap ${Math.round(heapUsed / MB)} MB, external ${Math.round(external / MB)} MB after`;
    return `${kind} (${[...reasons, after].join('; ')})`;
  };
  /** `{ kind, start, end }`, wall-clock ms. */
  const events = [];
  const keep = (event) => {
    events.push(event);
    if (events.length > KEPT) events.splice(0, events.length - KEPT);
  };
  let last = now();
  setInterval(() => {
    const tick = now();
    if (tick - last > STALL_MIN_MS) keep({ kind: 'stall', start: last, end: tick });
    last = tick;
  }, STALL_TICK_MS).unref();
  recordGc = (entry) => {
    if (entry.duration < 1) return;
    const start = performance.timeOrigin + entry.startTime;
    keep({ kind: gcKind(entry.detail), start, end: start + entry.duration });
  };
  process.on('message', (message) => {
    if (message?.type === 'timeline') process.send?.({ type: 'timeline', events: events.splice(0) });
  });
}
