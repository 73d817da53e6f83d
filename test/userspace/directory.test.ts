/**
 * The Directory hook the change feed applies stored accounts and keys through: a replaced account
 * reaches its keys' callers and services at once (blocked → 402 on the next request), keys may arrive
 * before their account, a key may have several hashes (a rotated key in its grace period).
 */
import { describe, expect, it } from 'vitest';
import { hashSecret } from '../../core/admission/secret-hashes.js';
import { buildConfig } from '../../core/config/load.js';
import { Directory } from '../../core/admission/directory.js';
import { Pipeline } from '../../core/admission/pipeline.js';
import { RateLimiter } from '../../core/admission/request-rate/local-rate-limiter.js';
import { TEST_KEY, testConfigInput } from '../support/gateway.js';

const directory = () => new Directory(buildConfig(testConfigInput(), { env: {} }));
const key = (id: string, accountId: number, secrets: string[]) => ({
  id,
  accountId,
  hashes: secrets.map(hashSecret),
  caller: (account: any) => ({ account, keyName: id, permissions: new Set(['MODEL_REQUESTS'] as const) }),
});

describe('Directory as the user space changes it', () => {
  it('replacing an account reaches its config keys and services at once: blocked is 402 on the next request', () => {
    const dir = directory();
    const pipeline = new Pipeline(dir, new RateLimiter());
    expect(pipeline.authenticate(TEST_KEY, 'h', 'MODEL_REQUESTS').account.blocked).toBe(false);
    dir.putAccount({ id: 1, name: 'demo', requestsPerSecond: 7, blocked: true });
    expect(() => pipeline.authenticate(TEST_KEY, 'h', 'MODEL_REQUESTS')).toThrow(expect.objectContaining({ code: 'ACCOUNT_BLOCKED' }));
    expect(dir.service('demo', 'echo').account).toMatchObject({ blocked: true, requestsPerSecond: 7 });
  });

  it('renaming an account frees its old name', () => {
    const dir = directory();
    dir.putAccount({ id: 2, name: 'renamed', requestsPerSecond: 1, blocked: false });
    expect(dir.findAccount('other')).toBeUndefined();
    expect(dir.findAccount('renamed')?.id).toBe(2);
  });

  it('a key applied before its account becomes callable when the account arrives; removing the account removes its keys', () => {
    const dir = directory();
    dir.putKey(key('key_early', 40, ['early-secret-0123456789']));
    expect(dir.callerForKey('early-secret-0123456789')).toBeUndefined();
    dir.putAccount({ id: 40, name: 'late', requestsPerSecond: 1, blocked: false });
    expect(dir.callerForKey('early-secret-0123456789')?.account.name).toBe('late');
    dir.removeAccount(40);
    expect(dir.callerForKey('early-secret-0123456789')).toBeUndefined();
    expect(dir.findAccount('late')).toBeUndefined();
  });

  it('a key with two hashes answers to both; replacing it drops the hash it no longer has; removing it drops both', () => {
    const dir = directory();
    dir.putKey(key('key_rotated', 1, ['new-secret-0123456789', 'old-secret-0123456789']));
    expect(dir.callerForKey('old-secret-0123456789')?.keyName).toBe('key_rotated');
    expect(dir.callerForKey('new-secret-0123456789')?.keyName).toBe('key_rotated');
    dir.putKey(key('key_rotated', 1, ['new-secret-0123456789']));
    expect(dir.callerForKey('old-secret-0123456789')).toBeUndefined();
    dir.removeKey('key_rotated');
    expect(dir.callerForKey('new-secret-0123456789')).toBeUndefined();
    expect(dir.callerForKey(TEST_KEY)?.keyName).toBe('all');
  });
});
