/**
 * A ticker (bench/lib/ticker.ts) in its own process: BENCH_TICK_CHUNKS stamped chunks per answer
 * (0 = until the caller goes away), one every BENCH_TICK_MS, to the gateway as `bench/<service>`
 * and, for the streaming scenario's baseline, directly as SSE on the port it reports (`directPort`).
 * The streaming scenario's service, and the memory scenario's slow one.
 */
import { reportReady } from '../lib/procs.js';
import { startDirectTicker, startTicker } from '../lib/ticker.js';

const timing = { intervalMs: Number(process.env.BENCH_TICK_MS ?? 1000), chunks: Number(process.env.BENCH_TICK_CHUNKS ?? 0) };
const ticker = await startTicker({
  address: process.env.PLATFORM_GRPC_HOST ?? '127.0.0.1:9090',
  token: process.env.PLATFORM_SERVICE_TOKEN ?? '',
  ...timing,
});
const direct = await startDirectTicker(timing);
process.on('message', (message: { type?: string }) => {
  if (message.type === 'active') process.send?.({ type: 'active', active: ticker.active });
});
process.once('SIGTERM', () => {
  ticker.close();
  direct.close();
  process.exit(0);
});
reportReady({ directPort: direct.port });
