import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { LongestFilesFirst } from './test/support/sequencer.js';

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
    // `*.slow.test.ts` take minutes of CPU each (coding agents' 2-9k-token prompts read by a real
    // engine on the test machine's cores) and run with `npm run test:slow`, not in `npm test`'s budget.
    include: process.env.SLOW_TESTS ? ['test/**/*.slow.test.ts'] : ['test/**/*.test.ts'],
    exclude: process.env.SLOW_TESTS ? [] : ['test/**/*.slow.test.ts', '**/node_modules/**'],
    // Servers on real sockets and child processes: separate processes keep them apart.
    pool: 'forks',
    // At least two files at once: most wait on sockets and child processes rather than the CPU.
    // vitest's default on 2 cores is one at a time, and the suite then spent about half its wall
    // time between files (starting each fork and importing the gateway), one file after another.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // A fresh process per file (vitest's default, kept): with `isolate: false` (a quarter less CPU) the
    // MongoDB async-task suite failed twice in a row in the full run (a held task re-delivered, the
    // reaper and a lease renewal late past their waits) and passed alone: what a file leaves running
    // in its process then slows the files after it.
    // The longest files first, so that none of them starts near the end and runs alone.
    sequence: { sequencer: LongestFilesFirst },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
