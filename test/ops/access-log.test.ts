import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatFixture, type ChatFixture } from '../support/chat-fixture.js';
import { TEST_KEY } from '../support/gateway.js';
import { capturingLogger } from './log-capture.js';

describe('access log', () => {
  const log = capturingLogger();
  let fx: ChatFixture;

  beforeAll(async () => {
    fx = await startChatFixture({}, { logger: log.logger });
  });
  afterAll(async () => fx?.close());

  const requestLines = () => log.lines.filter((l) => l.msg === 'request');

  it('writes one info line per request with who, what, where, how long, how big and the tokens; never the key or the body', async () => {
    const body = JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: 'secret-prompt-text one two three' }] });
    const res = await fetch(`${fx.base}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json', 'x-request-id': 'access-log-1' },
      body,
    });
    const answer = (await res.json()) as { usage: { prompt_tokens: number; completion_tokens: number } };
    expect(res.status).toBe(200);
    await new Promise((r) => setTimeout(r, 20));
    const lines = requestLines().filter((l) => l.requestId === 'access-log-1');
    expect(lines).toHaveLength(1);
    const line = lines[0]!;
    expect(line).toMatchObject({
      level: 30,
      method: 'POST',
      plugin: 'chatapi',
      route: '/api/adapters/chatapi{/v1}/chat/completions',
      status: 200,
      account: 'demo',
      key: 'all',
      service: 'demo/echo',
      model: 'demo/echo',
      bytesIn: Buffer.byteLength(body),
      inputTokens: answer.usage.prompt_tokens,
      outputTokens: answer.usage.completion_tokens,
    });
    expect(line.bytesOut).toBeGreaterThan(0);
    expect(line.ms).toBeGreaterThan(0);
    expect(log.text()).not.toContain(TEST_KEY);
    expect(log.text()).not.toContain('secret-prompt-text');
  });

  it('logs refused requests with their error code, and streamed answers with the bytes written', async () => {
    const refused = await fetch(`${fx.base}/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer wrong-key-000000000000', 'content-type': 'application/json', 'x-request-id': 'access-log-2' },
      body: '{}',
    });
    expect(refused.status).toBe(401);
    const streamed = await fetch(`${fx.base}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json', 'x-request-id': 'access-log-3' },
      body: JSON.stringify({
        model: 'demo/echo',
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: 'a b c' }],
      }),
    });
    const text = await streamed.text();
    await new Promise((r) => setTimeout(r, 20));
    const byId = Object.fromEntries(requestLines().map((l) => [l.requestId, l]));
    expect(byId['access-log-2']).toMatchObject({ status: 401, code: 'API_KEY_INVALID', plugin: 'chatapi' });
    expect(byId['access-log-2'].account).toBeUndefined();
    expect(byId['access-log-3']).toMatchObject({ status: 200, service: 'demo/echo', account: 'demo' });
    expect(byId['access-log-3'].bytesOut).toBeGreaterThanOrEqual(Buffer.byteLength(text));
    expect(byId['access-log-3'].outputTokens).toBeGreaterThan(0);
  });

  it('names no plugin or route for a path no plugin serves', async () => {
    await fetch(`${fx.gw.httpUrl}/no/such/path`, { headers: { 'x-request-id': 'access-log-4' } });
    await new Promise((r) => setTimeout(r, 20));
    expect(requestLines().find((l) => l.requestId === 'access-log-4')).toMatchObject({
      status: 404,
      plugin: 'none',
      route: 'unmatched',
      code: 'NOT_FOUND',
    });
  });
});

describe('access log switched off', () => {
  it('writes no request line with server.accessLog false', async () => {
    const { startTestGateway, testConfigInput } = await import('../support/gateway.js');
    const log = capturingLogger();
    const gw = await startTestGateway(
      testConfigInput({ server: { httpPort: 0, grpcPort: 0, accessLog: false }, plugins: { enabled: ['health'] } }),
      { logger: log.logger },
    );
    try {
      expect((await fetch(`${gw.httpUrl}/health/live`)).status).toBe(200);
      expect(log.lines.filter((l) => l.msg === 'request')).toEqual([]);
    } finally {
      await gw.close();
    }
  });
});
