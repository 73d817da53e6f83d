import { afterEach, describe, expect, it, vi } from 'vitest';
import { consoleLogger } from '../../sdk/index.js';

/** What a person running a service by hand sees: one line per entry, no object dumps. */
describe('the SDK console logger', () => {
  afterEach(() => vi.restoreAllMocks());

  it('writes one line per entry, the text without its fields', () => {
    const info = vi.spyOn(console, 'log').mockImplementation(() => {});
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const log = consoleLogger();
    log.info(
      { gateway: '127.0.0.1:9090', service: 'upper' },
      "model-sdk: connected to gateway 127.0.0.1:9090 as service 'upper' (account 1)",
    );
    log.warn({ gateway: 'g', retryInMs: 1200 }, 'model-sdk: cannot reach gateway g: connect ECONNREFUSED; retrying in 1.2 s');
    log.warn({ gateway: 'g', err: new Error('write EPIPE\n    at stack') }, 'model-sdk: write to the gateway failed');
    log.debug({ gateway: 'g' }, 'model-sdk: stream open');
    expect(info.mock.calls).toEqual([["[model-sdk] connected to gateway 127.0.0.1:9090 as service 'upper' (account 1)"]]);
    expect(warn.mock.calls).toEqual([
      ['[model-sdk] cannot reach gateway g: connect ECONNREFUSED; retrying in 1.2 s'],
      ['[model-sdk] write to the gateway failed: write EPIPE'],
    ]);
  });
});
