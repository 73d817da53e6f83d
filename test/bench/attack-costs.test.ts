/**
 * `npm run bench:attacks` (bench/attack-costs.ts, docs/benchmarks.md) for a moment, as the docs show it
 * with shorter options (and the four loops of scenario 9): it starts our gateway and the echo service, runs the idle line and one attack
 * kind, and prints one line each, and with `--timeline` each server's stalls and collections. Only the shape and the codes are checked, never a figure.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/python.js';

describe('npm run bench:attacks', () => {
  it("prints each attack kind with the servers' CPU per call and the codes the gateway answered", async () => {
    const { stdout } = await promisify(execFile)(
      'npm',
      // Four loops, as scenario 9 runs them: four 3.8 MB messages at once on one HTTP/2 session, which
      // Node's client refused itself (RST_STREAM ENHANCE_YOUR_CALM) while its session memory was capped.
      ['run', '--silent', 'bench:attacks', '--', '--seconds', '2', '--loops', '4', '--kinds', 'none,grpc-ext-flood', '--timeline'],
      {
        cwd: repoRoot,
        maxBuffer: 16 * 1024 * 1024,
      },
    );
    expect(stdout).toMatch(
      /^none\s+0 calls {2}gateway CPU \d+ ms \(-\), loop max [\d.]+ ms, \d+ MC {2}echo CPU \d+ ms \(-\), loop max [\d.]+ ms, \d+ MC {2}\{\}$/m,
    );
    // --timeline: each server's stalls and collections over each attack, by kind (or nothing at all).
    expect(stdout).toMatch(/^ {4}gateway: (nothing recorded|(\w[\w ]*) \d+× \d+ ms \(longest [\d.]+\))/m);
    expect(stdout).toMatch(/^ {4}echo: {4}(nothing recorded|(\w[\w ]*) \d+× \d+ ms \(longest [\d.]+\))/m);
    const flood = /^grpc-ext-flood\s+(\d+) calls {2}gateway CPU \d+ ms \([\d.]+ ms\/call\).*(\{.*\})$/m.exec(stdout);
    expect(flood, stdout).not.toBeNull();
    expect(Number(flood![1])).toBeGreaterThan(0);
    expect(Object.keys(JSON.parse(flood![2]!) as object)).toEqual(['grpc-ext-flood: EXT_PARAMS_TOO_LARGE']);
  }, 120_000);
});
