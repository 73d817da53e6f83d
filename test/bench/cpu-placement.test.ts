/**
 * The hostile scenario's CPU split (bench/lib/cpu-split.ts): on 2 or 3 CPUs the two servers share
 * CPU 0; from 4 CPUs on each has its own, and the clients keep at least two.
 */
import { describe, expect, it } from 'vitest';
import { cpuPlacement } from '../../bench/lib/cpu-split.js';

describe('cpuPlacement', () => {
  it.each([
    [2, ['0', '0'], '1'],
    [3, ['0', '0'], '1-2'],
    [4, ['0', '1'], '2-3'],
    [16, ['0', '1'], '2-15'],
  ])('places the gateway and the echo service on %i CPUs', (count, servers, clients) => {
    expect(cpuPlacement(count, 2)).toEqual({ servers, clients });
  });
});
