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
