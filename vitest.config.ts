import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const source = (path: string) => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  resolve: {
    // The workspace packages from their TypeScript sources (as tsconfig.json's paths), not their builds.
    alias: {
      '@model-gateway/protocol': source('./proto/src/index.ts'),
      '@model-gateway/sdk': source('./sdk/index.ts'),
    },
  },
  test: {
    include: ['test/**/*.test.ts'],
    // Servers on real sockets and child processes: separate processes keep them apart.
    pool: 'forks',
    // At least two files at once: most wait on sockets and child processes rather than the CPU.
    // vitest's default on 2 cores is one at a time, and the suite then spent about half its wall
    // time between files (starting each fork and importing the gateway), one file after another.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
