/**
 * The slow streaming service of the memory scenario, in its own process: a ticker (bench/lib/ticker.ts)
 * that streams a chunk every BENCH_TICK_MS until the caller goes away (BENCH_TICK_CHUNKS=0).
 */
import { reportReady } from '../lib/procs.js';
import { startTicker } from '../lib/ticker.js';

const ticker = await startTicker({
  address: process.env.PLATFORM_GRPC_HOST ?? '127.0.0.1:9090',
  token: process.env.PLATFORM_SERVICE_TOKEN ?? '',
  intervalMs: Number(process.env.BENCH_TICK_MS ?? 1000),
  chunks: Number(process.env.BENCH_TICK_CHUNKS ?? 0),
});
process.on('message', (message: { type?: string }) => {
  if (message.type === 'active') process.send?.({ type: 'active', active: ticker.active });
});
process.once('SIGTERM', () => {
  ticker.close();
  process.exit(0);
});
reportReady({});
