import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * Peak memory of this process while `attack` runs, sampled every few milliseconds: what a hostile
 * caller made an in-process gateway hold. RSS covers the buffers grpc-js and Node keep outside the heap.
 */
export async function peakGrowth<T>(attack: () => Promise<T>): Promise<{ result: T; rssMiB: number; heapMiB: number }> {
  const before = process.memoryUsage();
  let rss = before.rss;
  let heap = before.heapUsed + before.arrayBuffers;
  const sample = () => {
    const now = process.memoryUsage();
    rss = Math.max(rss, now.rss);
    heap = Math.max(heap, now.heapUsed + now.arrayBuffers);
  };
  const timer = setInterval(sample, 5);
  try {
    const result = await attack();
    sample();
    return { result, rssMiB: (rss - before.rss) / 2 ** 20, heapMiB: (heap - before.heapUsed - before.arrayBuffers) / 2 ** 20 };
  } finally {
    clearInterval(timer);
  }
}

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as (options?: { type: 'minor' }) => void;

/** One minor collection (a scavenge of the young generation), as V8 runs them between full ones. */
export function scavenge(): void {
  collectGarbage({ type: 'minor' });
}

/**
 * Live memory (heap and ArrayBuffers, after a full garbage collection) in MiB: what the process
 * really holds at this moment, without the garbage a flood leaves behind until the next collection.
 */
export function liveMiB(): number {
  collectGarbage();
  collectGarbage();
  const now = process.memoryUsage();
  return (now.heapUsed + now.arrayBuffers) / 2 ** 20;
}

/** Prints a figure for the closing note of #15 when SECURITY_FIGURES is set (quiet otherwise). */
export function figure(name: string, value: number, unit = 'MiB'): void {
  if (process.env.SECURITY_FIGURES) process.stderr.write(`[figure] ${name}: ${value.toFixed(1)} ${unit}\n`);
}
