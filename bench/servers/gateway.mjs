/**
 * Our gateway for the benchmark, in its own process and as `npm start` runs it: the compiled
 * JavaScript in dist/ (bench/lib/procs.ts's ensureBuilt builds it when a source is newer), not the
 * TypeScript sources under a loader. tsx's loader runs its module hooks in a thread of its own,
 * which alone held about 36 MB of the gateway's RSS (165 → 129 MB idle). Plain JavaScript for the
 * same reason. The config comes from the harness as JSON in BENCH_GATEWAY_CONFIG
 * (bench/lib/our-gateway.ts's startOurGateway); logs go at info level to stdout like `npm start`.
 * Reports its ports over IPC and answers `mem` and `loop-delay` requests (bench/lib/loop-delay.mjs),
 * and `instances` (its connected service instances, for a test of the bench's own options).
 * Its embedded store lives in a directory of its own, removed when it stops: the default (`.data` in
 * the working directory) would put every run's seeded keys, stored responses and usage into the
 * checkout's own demo database, and give each run the last one's. A gateway killed before it could
 * remove it (the harness kills one that has not closed within 5 s) leaves it behind, named by its
 * pid, and the next bench gateway removes it.
 */
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildConfig } from '../../dist/core/config/load.js';
import { createGateway } from '../../dist/core/gateway.js';
import { createLogger } from '../../dist/core/observe/logger.js';
import { reportReady } from '../lib/ready.mjs';
import { processAlive } from '../../scripts/process-alive.mjs';
import { seedUserSpaceKeys } from './userspace-keys.mjs';

// The hostile scenario's gateway answers `loop-delay` (set by bench/lib/our-gateway.ts); bench:ab's do not.
if (process.env.BENCH_LOOP_DELAY) await import('../lib/loop-delay.mjs');

/** A fresh store directory for this process; the directories of bench gateways no longer running go. */
function ownDataDir() {
  for (const name of readdirSync(tmpdir())) {
    const pid = /^bench-gateway-(\d+)$/.exec(name)?.[1];
    if (pid && !processAlive(Number(pid))) rmSync(join(tmpdir(), name), { recursive: true, force: true });
  }
  const dir = join(tmpdir(), `bench-gateway-${process.pid}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { mode: 0o700 });
  return dir;
}

const input = JSON.parse(process.env.BENCH_GATEWAY_CONFIG ?? '{}');
const dataDir = input.store?.dataDir === undefined ? ownDataDir() : undefined;
if (dataDir) input.store = { ...input.store, dataDir };
const config = buildConfig(input, { env: {} });
const gateway = await createGateway(config, { logger: createLogger() });
const { httpUrl, grpcAddress, httpPort, grpcPort } = await gateway.start();
// Row 3c: stored user-space keys, applied through the change feed like any stored key.
if (process.env.BENCH_USERSPACE_KEYS) {
  await seedUserSpaceKeys(
    gateway,
    Number(process.env.BENCH_USERSPACE_KEYS),
    process.env.BENCH_USERSPACE_KEY ?? '',
    JSON.parse(process.env.BENCH_USERSPACE_BUDGETS ?? '[]'),
  );
}
process.once(
  'SIGTERM',
  () =>
    void gateway.close().then(() => {
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
      process.exit(0);
    }),
);
process.on('message', (message) => {
  if (message?.type === 'instances') process.send?.({ type: 'instances', instances: gateway.gate.instances() });
});
reportReady({ httpUrl, grpcAddress, httpPort, grpcPort });
