import { ModelService, type ModelHandlers, type ModelServiceOptions, type SdkLogger } from '../../../sdk/index.js';
import type { HarnessGate } from './harness-gate.js';

/** Collects log lines; prints them too when SDK_TEST_LOG is set. */
export function testLogger(): SdkLogger & { lines: { level: string; args: unknown[] }[] } {
  const lines: { level: string; args: unknown[] }[] = [];
  const at =
    (level: string) =>
    (...args: unknown[]) => {
      lines.push({ level, args });
      if (process.env.SDK_TEST_LOG) console.log(level, ...args);
    };
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** A ModelService pointed at harness gates with short, test-friendly timings. */
export function startService(
  gates: HarnessGate | HarnessGate[],
  handlers: ModelHandlers,
  options: Partial<ModelServiceOptions> = {},
): ModelService {
  const list = Array.isArray(gates) ? gates : [gates];
  return new ModelService(handlers, {
    gateways: list.map((g) => g.address),
    connectionToken: 'test-token',
    descriptor: { name: 'test-model' },
    logger: testLogger(),
    backoff: { initialMs: 50, maxMs: 500, jitter: 0 },
    drainTimeoutMs: 3000,
    halfCloseTimeoutMs: 1000,
    env: {},
    ...options,
  }).start();
}
