/**
 * For bench servers: report readiness to the parent and answer `mem` requests (memory after a
 * forced collection when the process runs with --expose-gc). Plain JavaScript so that the compiled
 * gateway (bench/servers/gateway.mjs) can use it without a TypeScript loader.
 *
 * @param {Record<string, unknown>} info what the parent learns (ports, URLs)
 */
export function reportReady(info) {
  process.on('message', (message) => {
    if (message?.type === 'mem') {
      const gc = globalThis.gc;
      gc?.();
      process.send?.({ type: 'mem', ...process.memoryUsage(), gcForced: Boolean(gc) });
    }
  });
  process.on('disconnect', () => process.exit(0));
  process.send?.({ type: 'ready', pid: process.pid, ...info });
}
