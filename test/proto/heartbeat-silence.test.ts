import { describe, expect, it } from 'vitest';
import { PeerSilence, silenceLimitMs } from '../../proto/src/index.js';

describe('heartbeat silence (both ends of a processAsync stream)', () => {
  it('the limit is 3 intervals plus the grace, 1 s unless given', () => {
    expect(silenceLimitMs(5000)).toBe(16_000);
    expect(silenceLimitMs(200, 250)).toBe(850);
  });

  it('counts the time since the peer was last heard while checks come on time', () => {
    const silence = new PeerSilence(200, 0);
    expect(silence.check(200)).toBe(200);
    expect(silence.check(400)).toBe(400);
    silence.heard(450);
    expect(silence.check(600)).toBe(150);
    expect(silence.check(800)).toBe(350);
  });

  it('does not count a stall of this process as the peer’s silence', () => {
    const silence = new PeerSilence(200, 0);
    expect(silence.check(200)).toBe(200);
    // The loop was stalled for 2.5 s: the check due at 400 runs at 2900, before the socket is read.
    expect(silence.check(2900)).toBe(400);
    expect(silence.check(3100)).toBe(600);
  });

  it('still finds a peer that went away, after as many checks as without the stall', () => {
    const checksUntilDropped = (stallAt: number): number => {
      const silence = new PeerSilence(200, 0);
      let now = 0;
      for (let checks = 1; ; checks++) {
        now += checks === stallAt ? 3000 : 200;
        if (silence.check(now) > silenceLimitMs(200)) return checks;
      }
    };
    expect(checksUntilDropped(0)).toBe(9);
    expect(checksUntilDropped(3)).toBe(9);
  });

  it('small timer jitter neither hides nor invents silence', () => {
    const silence = new PeerSilence(200, 0);
    expect(silence.check(203)).toBe(200);
    expect(silence.check(401)).toBe(398);
    silence.heard(401);
    expect(silence.check(605)).toBe(200);
  });
});
