/**
 * Our gateway for the benchmark, in its own process: the config of bench/lib/config.ts (standard
 * chat adapter and health, default plugin options, so usage logging is on as in production), logs
 * at info level to stdout like `npm start`. Reports its ports over IPC and answers `mem` requests.
 */
import { buildConfig } from '../../core/config/load.js';
import { createGateway } from '../../core/gateway.js';
import { createLogger } from '../../core/logger.js';
import { benchConfigInput } from '../lib/config.js';
import { reportReady } from '../lib/procs.js';

// BENCH_EXTRA_PLUGINS (comma-separated) adds plugins, e.g. `metrics` for bench/feature-cost.ts.
// BENCH_TRACES_URL turns tracing on, exporting to that OTLP/HTTP URL (bench/feature-cost.ts);
// BENCH_TRACES_SAMPLE sets its sample ratio (default 1).
// BENCH_UPSTREAM_URL: the mock upstream that `bench/direct` (the upstream connector) calls.
const input = benchConfigInput(process.env.BENCH_UPSTREAM_URL) as { plugins: { enabled: string[] }; tracing?: Record<string, unknown> };
for (const name of (process.env.BENCH_EXTRA_PLUGINS ?? '').split(',').filter(Boolean)) input.plugins.enabled.push(name);
if (process.env.BENCH_TRACES_URL) input.tracing = { otlpEndpoint: process.env.BENCH_TRACES_URL, sampleRatio: Number(process.env.BENCH_TRACES_SAMPLE ?? 1) };
const config = buildConfig(input, { env: {} });
const gateway = await createGateway(config, { logger: createLogger() });
const { httpUrl, grpcAddress, httpPort, grpcPort } = await gateway.start();
process.once('SIGTERM', () => void gateway.close().then(() => process.exit(0)));
reportReady({ httpUrl, grpcAddress, httpPort, grpcPort });
