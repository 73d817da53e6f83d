/**
 * `npm run bench:window` (bench/receive-window.ts, docs/benchmarks.md) for a moment, with fewer
 * messages than the docs' run: it starts the sender and the receivers and prints one line for each
 * placement and window. Only the shape is checked, never a figure.
 */
import { execFile } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/python.js';

describe('npm run bench:window', () => {
  it("prints the receiver's CPU and wall time per 4 MiB message with the default windows and the wider ones", async () => {
    const { stdout } = await promisify(execFile)('npm', ['run', '--silent', 'bench:window', '--', '--rounds', '1', '--messages', '8'], {
      cwd: repoRoot,
    });
    const lines = stdout.trim().split('\n');
    const placements = availableParallelism() > 1 ? ['two cores', 'one core'] : ['one core'];
    const cases = [
      'a service receiving, the default 64 KiB window',
      "a service receiving, the SDK's 1024 KiB window",
      'the gateway receiving, the default 64 KiB window',
      "the gateway receiving, a registered service's wider window",
    ];
    expect(lines).toHaveLength(placements.length * cases.length);
    for (const [i, placement] of placements.entries()) {
      for (const [j, name] of cases.entries()) {
        const line = lines[i * cases.length + j]!;
        expect(line.startsWith(`${placement}, ${name}: `), line).toBe(true);
        expect(line.slice(`${placement}, ${name}: `.length)).toMatch(
          /^[\d.]+ ms CPU and [\d.]+ ms wall per 4 MiB message \(rounds: [\d.]+ ms CPU\)$/,
        );
      }
    }
  }, 120_000);
});
