/** core/flow/timers.ts `every`: the one run-every-interval loop. Fake timers: the test moves the clock. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { every } from '../../core/flow/timers.js';

describe('every', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('runs every interval until stopped; stopping twice is harmless', () => {
    let runs = 0;
    const stop = every(100, () => runs++);
    vi.advanceTimersByTime(350);
    expect(runs).toBe(3);
    stop();
    stop();
    vi.advanceTimersByTime(1_000);
    expect(runs).toBe(3);
  });

  it('`now` runs once at once too', () => {
    let runs = 0;
    const stop = every(100, () => runs++, { now: true });
    expect(runs).toBe(1);
    vi.advanceTimersByTime(100);
    expect(runs).toBe(2);
    stop();
  });

  it('skips ticks while an async run is still going', async () => {
    let started = 0;
    let finish: () => void = () => {};
    const stop = every(100, () => {
      started++;
      return new Promise<void>((resolve) => (finish = resolve));
    });
    vi.advanceTimersByTime(500);
    expect(started).toBe(1);
    finish();
    await vi.advanceTimersByTimeAsync(100);
    expect(started).toBe(2);
    stop();
  });

  it('hands thrown and rejected errors to onError and goes on', async () => {
    const errors: string[] = [];
    let runs = 0;
    const stop = every(
      100,
      () => {
        runs++;
        if (runs === 1) throw new Error('sync');
        if (runs === 2) return Promise.reject(new Error('async'));
        return undefined;
      },
      { onError: (err) => errors.push((err as Error).message) },
    );
    await vi.advanceTimersByTimeAsync(300);
    expect(errors).toEqual(['sync', 'async']);
    expect(runs).toBe(3);
    stop();
  });

  it('does not keep the process alive unless asked to', () => {
    const unref = vi.spyOn(globalThis, 'setInterval');
    const stopA = every(100, () => {});
    const stopB = every(100, () => {}, { unref: false });
    const [a, b] = unref.mock.results.map((r) => r.value as NodeJS.Timeout);
    expect(a!.hasRef()).toBe(false);
    expect(b!.hasRef()).toBe(true);
    stopA();
    stopB();
    unref.mockRestore();
  });
});
