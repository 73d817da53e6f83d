/**
 * Stream deadlines are the call's own (ServiceCall.setStreamDeadlines, armed by Gate.open from
 * `firstChunkTimeoutMs` / `idleTimeoutMs`): every relay reads the same failure. Fake timers: the
 * test moves the clock itself, so nothing here depends on the machine's speed.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ServiceCall, type ServiceCallHooks } from '../../core/gate/service-call.js';

function callWithHooks() {
  const cancelled: number[] = [];
  const released: number[] = [];
  const hooks: ServiceCallHooks = {
    send: () => {},
    whenWritable: () => Promise.resolve(),
    cancel: (call) => cancelled.push(call.requestId),
    release: (call) => released.push(call.requestId),
    maxBufferedBytes: 1 << 20,
    maxAnswerBytes: 1 << 20,
  };
  return { call: new ServiceCall(1, 7, hooks), cancelled, released };
}

const chunk = (i: number, finish = false) => ({
  requestId: 1,
  body: 'partialPredict' as const,
  partialPredict: { data: { json: String(i) }, finish },
});

describe('ServiceCall stream deadlines', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('no first frame within firstChunkMs: STREAM_FIRST_CHUNK_TIMEOUT, and the service gets cancel', async () => {
    const { call, cancelled } = callWithHooks();
    call.setStreamDeadlines({ firstChunkMs: 1_000, idleMs: 50 }, 'demo/chat');
    const next = call.next();
    vi.advanceTimersByTime(999);
    expect(call.settled).toBe(false);
    vi.advanceTimersByTime(1);
    await expect(next).rejects.toMatchObject({ code: 'STREAM_FIRST_CHUNK_TIMEOUT', args: { service: 'demo/chat', timeoutSec: '1' } });
    expect(cancelled).toEqual([1]);
  });

  it('after the first frame the idle deadline runs between frames, re-armed by each frame', async () => {
    const { call, cancelled } = callWithHooks();
    call.setStreamDeadlines({ firstChunkMs: 1_000, idleMs: 100 }, 'demo/chat');
    vi.advanceTimersByTime(900);
    call.deliver(chunk(0));
    for (let i = 1; i <= 5; i++) {
      vi.advanceTimersByTime(99);
      call.deliver(chunk(i));
    }
    expect(call.failureCode).toBeUndefined();
    vi.advanceTimersByTime(100);
    expect(call.failureCode).toBe('STREAM_IDLE_TIMEOUT');
    expect(cancelled).toEqual([1]);
    const read: string[] = [];
    await expect(
      (async () => {
        for await (const frame of call) read.push(frame.partialPredict!.data!.json!);
      })(),
    ).rejects.toMatchObject({ code: 'STREAM_IDLE_TIMEOUT', args: { timeoutSec: '0.1' } });
    expect(read).toEqual(['0', '1', '2', '3', '4', '5']);
  });

  it('idle is measured on frames from the service, not on reads: a reader that waits does not time it out', () => {
    const { call } = callWithHooks();
    call.setStreamDeadlines({ firstChunkMs: 0, idleMs: 100 }, 'demo/chat');
    vi.advanceTimersByTime(10_000); // no first-chunk deadline
    for (let i = 0; i < 20; i++) {
      call.deliver(chunk(i));
      vi.advanceTimersByTime(90);
    }
    expect(call.failureCode).toBeUndefined();
  });

  it('a finished stream disarms its deadline', () => {
    const { call, cancelled, released } = callWithHooks();
    call.setStreamDeadlines({ firstChunkMs: 100, idleMs: 100 }, 'demo/chat');
    call.deliver(chunk(0));
    call.deliver(chunk(1, true));
    vi.advanceTimersByTime(1_000);
    expect(call.failureCode).toBeUndefined();
    expect(cancelled).toEqual([]);
    expect(released).toEqual([1]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('without deadlines a call arms no timer', () => {
    const { call } = callWithHooks();
    call.setStreamDeadlines({ firstChunkMs: 0, idleMs: 0 }, 'demo/chat');
    expect(vi.getTimerCount()).toBe(0);
    call.deliver(chunk(0));
    expect(vi.getTimerCount()).toBe(0);
  });
});
