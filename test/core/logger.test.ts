import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { censorSecrets, createLogger } from '../../core/observe/logger.js';

function capture() {
  const lines: Record<string, any>[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, logger: createLogger({ level: 'info', destination }) };
}

describe('logger', () => {
  it("censors secrets in objects logged one level down, and leaves the caller's object alone", () => {
    const { lines, logger } = capture();
    const headers = { authorization: 'Bearer sk-secret', 'PLATFORM-API-KEY': 'k1', 'content-type': 'application/json' };
    logger.info({ headers, call: { authToken: 't', connectionToken: 'c', key: 'raw', model: 'm' }, requestId: 'r1' }, 'request');
    expect(lines[0]).toMatchObject({
      msg: 'request',
      requestId: 'r1',
      headers: { authorization: '[redacted]', 'PLATFORM-API-KEY': '[redacted]', 'content-type': 'application/json' },
      call: { authToken: '[redacted]', connectionToken: '[redacted]', key: '[redacted]', model: 'm' },
    });
    expect(JSON.stringify(lines[0])).not.toMatch(/sk-secret|"k1"|"raw"/);
    expect(headers.authorization).toBe('Bearer sk-secret');
  });

  it('censors what child loggers log, and keeps top-level fields such as a key name', () => {
    const { lines, logger } = capture();
    logger
      .child({ plugin: 'chatapi' })
      .info({ key: 'key-name', upstream: { Authorization: 'Bearer x' }, usage: { total_tokens: 3 } }, 'usage');
    expect(lines[0]).toMatchObject({
      plugin: 'chatapi',
      upstream: { Authorization: '[redacted]' },
      key: 'key-name',
      usage: { total_tokens: 3 },
    });
  });

  it('writes every line to stdout, the last ones too when the process exits', async () => {
    const { spawnSync } = await import('node:child_process');
    const script =
      "import { createLogger } from './core/observe/logger.ts'; const l = createLogger(); l.info('first'); setTimeout(() => { l.info('second'); setTimeout(() => {}, 300); }, 200);";
    const out = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 10_000,
    });
    expect(
      out.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).msg),
    ).toEqual(['first', 'second']);
  });

  it('returns the same object when there is nothing to censor', () => {
    const object = { requestId: 'r', usage: { prompt_tokens: 1 }, list: [{ key: 'in an array, two levels down' }] };
    expect(censorSecrets(object)).toBe(object);
  });
});
