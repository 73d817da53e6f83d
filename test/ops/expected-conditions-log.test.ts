/**
 * Issue 25 (also seen) and issue 24: expected conditions (NO_INSTANCE_IN_TIME, a 503 with no
 * instance, STREAM_FIRST_CHUNK_TIMEOUT, UPSTREAM_UNREACHABLE) were logged at `error` with their stacks
 * (36 lines from one wake test). Each is one `warn` line, without a stack, read from the log of a real
 * gateway on loopback (a real pino logger, lines captured).
 */
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OTHER_ACCOUNT_KEY, startTestGateway, testConfigInput, type TestGateway } from '../support/gateway.js';
import { startScriptedEngine, type ScriptedEngine } from '../support/upstream.js';
import { freePort } from '../support/ports.js';
import { capturingLogger } from './log-capture.js';

const WARN = 40;

describe('expected conditions are one warn line without a stack', () => {
  let gw: TestGateway;
  let hung: ScriptedEngine;
  const log = capturingLogger();

  beforeAll(async () => {
    hung = await startScriptedEngine(() => undefined);
    const down = await freePort();
    const svc = (id: number, name: string, extra: Record<string, unknown>) => ({
      id,
      name,
      account: 'demo',
      public: true,
      family: 'openai',
      ...extra,
    });
    gw = await startTestGateway(
      testConfigInput({
        services: [
          svc(80, 'sleepy', { connectionTokens: [{ token: 'sleepy-service-token-01' }], waitForInstanceMs: 200 }),
          svc(81, 'absent', { connectionTokens: [{ token: 'absent-service-token-01' }] }),
          svc(82, 'down', {
            upstream: { api: 'openai', baseUrl: `http://127.0.0.1:${down}/v1`, defaultModel: 'm', connectTimeoutMs: 2000 },
          }),
          svc(83, 'hung', { upstream: { api: 'openai', baseUrl: hung.url, defaultModel: 'm' } }),
        ],
        plugins: { enabled: ['chatapi', 'sync-predict', 'upstream'], options: { chatapi: { firstChunkTimeoutMs: 300 } } },
      }),
      { logger: log.logger },
    );
  });
  afterAll(async () => {
    await gw?.close();
    await hung?.close();
  });

  /** The lines at warn or above that the request wrote (everything logged while it ran and ended). */
  const loggedBy = async (send: () => Promise<unknown>): Promise<Record<string, any>[]> => {
    const before = log.lines.length;
    await send();
    // The access-log line comes last: once it is there, the request has logged all it will.
    for (let i = 0; i < 100 && !log.lines.slice(before).some((l) => l.msg === 'request'); i++) await new Promise((r) => setTimeout(r, 20));
    return log.lines.slice(before).filter((l) => l.level >= WARN);
  };

  const expectOneWarnLine = (lines: Record<string, any>[], code: string) => {
    expect(lines, JSON.stringify(lines)).toHaveLength(1);
    const [line] = lines;
    expect(line).toMatchObject({ level: WARN, code });
    expect(line!.err).toBeUndefined();
    expect(JSON.stringify(line)).not.toMatch(/\\n\s+at /);
    expect(line!.msg).not.toContain('\n');
  };

  const chat = (model: string, stream = false) =>
    request(gw.httpUrl)
      .post('/api/adapters/chatapi/v1/chat/completions')
      .set('Authorization', `Bearer ${OTHER_ACCOUNT_KEY}`)
      .send({ model, stream, messages: [{ role: 'user', content: 'hi' }] });

  it('NO_INSTANCE_IN_TIME', async () => {
    const lines = await loggedBy(() =>
      request(gw.httpUrl)
        .post('/api/platformgate/account/demo/model/sleepy/predict')
        .set('PLATFORM-API-KEY', OTHER_ACCOUNT_KEY)
        .send({})
        .expect(503),
    );
    expectOneWarnLine(lines, 'NO_INSTANCE_IN_TIME');
  });

  it('a 503 with no instance (SERVICE_UNAVAILABLE)', async () => {
    expectOneWarnLine(await loggedBy(() => chat('demo/absent').expect(503)), 'SERVICE_UNAVAILABLE');
  });

  it('an unreachable engine (SERVICE_UNAVAILABLE on the chat adapters)', async () => {
    expectOneWarnLine(await loggedBy(() => chat('demo/down').expect(503)), 'SERVICE_UNAVAILABLE');
  });

  it('STREAM_FIRST_CHUNK_TIMEOUT', async () => {
    expectOneWarnLine(await loggedBy(() => chat('demo/hung', true).expect(504)), 'STREAM_FIRST_CHUNK_TIMEOUT');
  });
});
