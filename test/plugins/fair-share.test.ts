/**
 * The sharing rule of an engine's connections between accounts (plugins/upstream/fair-share.ts), on
 * its own: the per-account share, who gets a freed connection, and cancelled waits. The attack it
 * answers runs against a real gateway in test/security/engine-fairness.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { FairShare } from '../../plugins/upstream/fair-share.js';

const BOB = 2;
const ALICE = 1;
const CAROL = 3;

/** Starts a wait and records the order in which waits are granted. */
function waiter(share: FairShare, account: number, granted: string[], name: string) {
  const wait = share.wait(account);
  void wait.turn.then((taken) => taken && granted.push(name));
  return wait;
}

const settle = () => new Promise((r) => setImmediate(r));

describe('FairShare', () => {
  it('an account takes at most its share; another account still finds a connection', () => {
    const share = new FairShare(4, 3);
    expect([share.tryTake(BOB), share.tryTake(BOB), share.tryTake(BOB), share.tryTake(BOB)]).toEqual([true, true, true, false]);
    expect(share.tryTake(ALICE)).toBe(true);
    expect(share.tryTake(CAROL)).toBe(false);
  });

  it("a freed connection goes to the waiting account running the fewest, each account's own in order", async () => {
    const share = new FairShare(2, 2);
    const granted: string[] = [];
    share.tryTake(BOB);
    share.tryTake(BOB);
    waiter(share, BOB, granted, 'bob 3');
    waiter(share, BOB, granted, 'bob 4');
    waiter(share, ALICE, granted, 'alice 1');
    waiter(share, ALICE, granted, 'alice 2');
    share.release(BOB);
    await settle();
    expect(granted).toEqual(['alice 1']);
    share.release(BOB);
    await settle();
    // Bob runs none now, alice one: bob's turn.
    expect(granted).toEqual(['alice 1', 'bob 3']);
    share.release(ALICE);
    await settle();
    expect(granted).toEqual(['alice 1', 'bob 3', 'alice 2']);
  });

  it('a cancelled wait leaves the queue and takes nothing; close ends every wait', async () => {
    const share = new FairShare(1, 1);
    share.tryTake(BOB);
    const granted: string[] = [];
    const gone = waiter(share, ALICE, granted, 'alice');
    const carol = waiter(share, CAROL, granted, 'carol');
    gone.cancel();
    expect(await gone.turn).toBe(false);
    expect(share.waiting).toBe(1);
    share.release(BOB);
    expect(await carol.turn).toBe(true);
    expect(granted).toEqual(['carol']);
    const late = share.wait(BOB);
    share.close();
    expect(await late.turn).toBe(false);
    expect(share.waiting).toBe(0);
  });
});
