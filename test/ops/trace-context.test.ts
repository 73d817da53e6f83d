import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatFixture, type ChatFixture } from '../support/chat-fixture.js';
import { TEST_KEY } from '../support/gateway.js';

describe('W3C trace context to services', () => {
  let fx: ChatFixture;
  beforeAll(async () => {
    fx = await startChatFixture();
  });
  afterAll(async () => fx?.close());

  const chat = (headers: Record<string, string>) =>
    fetch(`${fx.base}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ model: 'demo/plain', messages: [{ role: 'user', content: 'hi' }] }),
    });

  it("passes a caller's traceparent and tracestate to the service, and drops a malformed one", async () => {
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    expect((await chat({ traceparent, tracestate: 'vendor=abc' })).status).toBe(200);
    const passed = fx.plain.requests.at(-1)!.headers;
    expect(passed.traceparent).toBe(traceparent);
    expect(passed.tracestate).toBe('vendor=abc');

    expect((await chat({ traceparent: '00-00000000000000000000000000000000-00f067aa0ba902b7-01', tracestate: 'vendor=abc' })).status).toBe(
      200,
    );
    const dropped = fx.plain.requests.at(-1)!.headers;
    expect(dropped.traceparent).toBeUndefined();
    expect(dropped.tracestate).toBeUndefined();
  });
});
