import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LeaseKeeper } from '../../core/storage/lease-keeper.js';

describe('LeaseKeeper', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A store that holds the leases in `held` and records every batch it was asked to renew. */
  function fakeStore(initial: string[]) {
    const held = new Set(initial);
    const batches: string[][] = [];
    let failNext = false;
    return {
      held,
      batches,
      failOnce: () => (failNext = true),
      renew: async (leases: readonly string[]) => {
        batches.push([...leases]);
        if (failNext) {
          failNext = false;
          throw new Error('database hiccup');
        }
        return new Set(leases.filter((l) => held.has(l)));
      },
    };
  }

  it('renews every held lease in one batch per tick, on one timer', async () => {
    const store = fakeStore(['a', 'b', 'c']);
    const keeper = new LeaseKeeper<string>({ intervalMs: 100, renew: store.renew });
    for (const lease of ['a', 'b', 'c']) keeper.hold(lease, () => undefined);
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(100);
    expect(store.batches).toEqual([['a', 'b', 'c']]);
    await vi.advanceTimersByTimeAsync(200);
    expect(store.batches).toHaveLength(3);
    keeper.close();
  });

  it('tells the holder of a refused lease once, and renews it no more', async () => {
    const store = fakeStore(['a', 'b']);
    const keeper = new LeaseKeeper<string>({ intervalMs: 100, renew: store.renew });
    const lost: string[] = [];
    keeper.hold('a', () => lost.push('a'));
    keeper.hold('b', () => lost.push('b'));
    await vi.advanceTimersByTimeAsync(100);
    expect(lost).toEqual([]);
    store.held.delete('b'); // canceled, or taken over by another process
    await vi.advanceTimersByTimeAsync(100);
    expect(lost).toEqual(['b']);
    await vi.advanceTimersByTimeAsync(100);
    expect(store.batches.at(-1)).toEqual(['a']);
    expect(lost).toEqual(['b']);
    expect(keeper.size).toBe(1);
    keeper.close();
  });

  it('keeps the leases through a failed renewal and retries at the next tick', async () => {
    const store = fakeStore(['a']);
    const errors: unknown[] = [];
    const keeper = new LeaseKeeper<string>({ intervalMs: 100, renew: store.renew, onError: (err) => errors.push(err) });
    let lost = false;
    keeper.hold('a', () => (lost = true));
    store.failOnce();
    await vi.advanceTimersByTimeAsync(100);
    expect(errors).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(100);
    expect(store.batches).toEqual([['a'], ['a']]);
    expect(lost).toBe(false);
    keeper.close();
  });

  it('does not report a lease released while its renewal was in flight, and stops the timer with the last lease', async () => {
    let finish: (held: Set<string>) => void = () => undefined;
    const keeper = new LeaseKeeper<string>({ intervalMs: 100, renew: () => new Promise((resolve) => (finish = resolve)) });
    let lost = false;
    keeper.hold('a', () => (lost = true));
    await vi.advanceTimersByTimeAsync(100);
    keeper.release('a'); // the work ended meanwhile
    finish(new Set());
    await vi.advanceTimersByTimeAsync(0);
    expect(lost).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
  });
});
