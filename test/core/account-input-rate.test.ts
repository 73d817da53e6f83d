import { describe, expect, it } from 'vitest';
import { AccountInputRate, FREE_INPUT_BYTES } from '../../core/flow/byte-rate.js';

const MiB = 1024 * 1024;

/**
 * `limits.inputBytesPerSecondPerAccount` is every account's input rate unless the account has its own
 * (`accounts[].inputBytesPerSecond`, or a stored account's, changed by the operator at run time).
 */
describe('AccountInputRate: the default rate, or the account its own', () => {
  it('charges an account with its own rate against that rate, the others against the default', () => {
    const own = new Map<number, number>([[2, 64 * 1024]]);
    const rates = new AccountInputRate(4 * MiB, (id) => own.get(id));
    // 1 MiB: within the default's one second's worth, far past the own rate's 64 KiB.
    expect(rates.charge(1, MiB)).toBe(0);
    const wait = rates.charge(2, MiB);
    // The debt (1 MiB - 64 KiB) and an eighth of a second's worth, at 64 KiB/s: about 15.1 s.
    expect(wait).toBe(Math.ceil(((MiB - 64 * 1024 + 8 * 1024) / (64 * 1024)) * 1000));
    expect(rates.chargeOf(2).owed()).toBeGreaterThan(14_000);
    expect(rates.chargeOf(1).owed()).toBe(0);
  });

  it('follows a change of the account its rate at the next charge', () => {
    const own = new Map<number, number>();
    const rates = new AccountInputRate(64 * 1024, (id) => own.get(id));
    expect(rates.charge(7, MiB)).toBeGreaterThan(0);
    // The operator raises its rate: a fresh bucket of the new rate, the old debt forgiven.
    own.set(7, 16 * MiB);
    expect(rates.chargeOf(7).owed()).toBe(0);
    expect(rates.charge(7, 8 * MiB)).toBe(0);
    // And back to the default.
    own.delete(7);
    expect(rates.charge(7, MiB)).toBeGreaterThan(0);
  });

  it("a body's first FREE_INPUT_BYTES cost nothing at either rate", () => {
    const rates = new AccountInputRate(64 * 1024, () => 65_536);
    const charge = rates.chargeOf(3);
    expect(charge(FREE_INPUT_BYTES)).toBe(0);
    expect(rates.chargeOf(3).owed()).toBe(0);
  });
});
