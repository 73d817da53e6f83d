/**
 * Fidelity of the adapters and the upstream connector, judged by the official OpenAI Node SDK: a test
 * upstream plays a real engine (cut-off streams, 429 with retry-after and x-ratelimit-*, 400 with
 * param, 500) and the client sees exactly what the upstream sent. Also: CORS, 503 for a service with
 * no instance, and stream_options.include_usage on the direct adapter.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_KEY } from '../support/gateway.js';
import { rawPost, sseData } from '../support/chat.js';
import { startChatFixture, type ChatFixture } from '../support/chat-fixture.js';
import { ENGINE_FAILURES } from '../support/upstream.js';

describe('adapters relay exactly what the upstream engine sent', () => {
  let fx: ChatFixture;
  let client: OpenAI;
  const ask = (text: string): OpenAI.ChatCompletionCreateParamsNonStreaming => ({
    model: 'demo/openai-proxy/gpt-up',
    messages: [{ role: 'user', content: text }],
  });

  beforeAll(async () => {
    fx = await startChatFixture({ chatapi: { cors: { allowedOrigins: ['https://app.example.com'] } } });
    client = new OpenAI({ apiKey: TEST_KEY, baseURL: fx.base, maxRetries: 0 });
  });
  afterAll(async () => {
    await fx?.close();
  });

  for (const [text, failure] of Object.entries(ENGINE_FAILURES)) {
    it(`relays the engine's ${failure.status} with its body fields and headers (${text})`, async () => {
      for (const base of [fx.base, fx.direct]) {
        const sdk = new OpenAI({ apiKey: TEST_KEY, baseURL: base, maxRetries: 0 });
        const err = (await sdk.chat.completions.create(ask(text)).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
        expect(err, base).toBeInstanceOf(OpenAI.APIError);
        expect(err.status).toBe(failure.status);
        const sent = failure.body.error;
        expect(err.message).toBe(`${failure.status} ${sent.message}`);
        expect(err.type).toBe(sent.type);
        expect(err.code).toBe(sent.code);
        expect(err.param).toBe(sent.param);
        expect(err.headers?.get('x-upstream-request-id')).toBe(failure.headers['x-request-id']);
        for (const [name, value] of Object.entries(failure.headers)) {
          if (name !== 'x-request-id') expect(err.headers?.get(name), name).toBe(value);
        }
        // Every 429 carries Retry-After.
        if (failure.status === 429) expect(err.headers?.get('retry-after')).toBeTruthy();
      }
    });
  }

  it('classes the relayed errors as the SDK does for the engine itself', async () => {
    await expect(client.chat.completions.create(ask('rate-limited'))).rejects.toBeInstanceOf(OpenAI.RateLimitError);
    await expect(client.chat.completions.create(ask('bad-param'))).rejects.toBeInstanceOf(OpenAI.BadRequestError);
    await expect(client.chat.completions.create(ask('server-error'))).rejects.toBeInstanceOf(OpenAI.InternalServerError);
  });

  it('ends a cut-off engine stream with an error event, never [DONE]: the SDK throws', async () => {
    for (const base of [fx.base, fx.direct]) {
      const raw = await rawPost(`${base}/chat/completions`, { ...ask('cut-off'), stream: true }, { authorization: `Bearer ${TEST_KEY}` });
      const events = sseData(raw.text);
      expect(events).not.toContain('[DONE]');
      expect(JSON.parse(events.at(-1)!).error).toMatchObject({
        code: 'STREAM_CUT_OFF',
        message: expect.stringContaining('before its terminal event ([DONE])'),
      });
      const sdk = new OpenAI({ apiKey: TEST_KEY, baseURL: base, maxRetries: 0 });
      const stream = await sdk.chat.completions.create({ ...ask('cut-off'), stream: true });
      await expect(
        (async () => {
          for await (const _ of stream) {
            /* drain */
          }
        })(),
      ).rejects.toThrow(/incomplete/);
    }
  });

  it('ends a cut-off Responses stream with error and response.failed', async () => {
    const stream = await client.responses.create({ model: 'demo/openai-proxy/gpt-up', input: 'cut-off', stream: true });
    const types: string[] = [];
    await expect(
      (async () => {
        for await (const event of stream) types.push(event.type);
      })(),
    ).rejects.toThrow(/incomplete/);
    expect(types).not.toContain('response.completed');
  });

  it('answers 503 with Retry-After for a service with no connected instance; the SDK retries it', async () => {
    const res = await rawPost(
      `${fx.base}/chat/completions`,
      { model: 'demo/private', messages: [{ role: 'user', content: 'x' }] },
      { authorization: TEST_KEY },
    );
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
    expect(JSON.parse(res.text).error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', type: 'api_error' });
    const retrying = new OpenAI({ apiKey: TEST_KEY, baseURL: fx.base, maxRetries: 1 });
    const before = Date.now();
    await expect(
      retrying.chat.completions.create({ model: 'demo/private', messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toBeInstanceOf(OpenAI.InternalServerError);
    // The SDK waited the Retry-After second before its one retry.
    expect(Date.now() - before).toBeGreaterThanOrEqual(900);
  });

  it('honours stream_options.include_usage of demo/echo on the direct adapter', async () => {
    const direct = new OpenAI({ apiKey: TEST_KEY, baseURL: fx.direct, maxRetries: 0 });
    const stream = await direct.chat.completions.create({
      model: 'demo/echo',
      messages: [{ role: 'user', content: 'a b c' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } });
  });

  describe('CORS', () => {
    const origin = 'https://app.example.com';

    it('answers a preflight from an allowed origin with the methods and requested headers', async () => {
      const res = await fetch(`${fx.base}/v1/chat/completions`, {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization, content-type, x-stainless-os',
        },
      });
      expect(res.status).toBe(204);
      expect(res.headers.get('access-control-allow-origin')).toBe(origin);
      expect(res.headers.get('access-control-allow-methods')).toContain('POST');
      expect(res.headers.get('access-control-allow-headers')).toBe('authorization, content-type, x-stainless-os');
      expect(res.headers.get('access-control-max-age')).toBe('600');
    });

    it('marks answers, errors and streams for an allowed origin, and nothing for another', async () => {
      const ok = await fetch(`${fx.base}/v1/chat/completions`, {
        method: 'POST',
        headers: { origin, authorization: TEST_KEY, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: 'x' }], stream: true }),
      });
      expect(ok.headers.get('access-control-allow-origin')).toBe(origin);
      expect(ok.headers.get('access-control-expose-headers')).toContain('x-request-id');
      expect(ok.headers.get('access-control-expose-headers')).toContain('x-gateway-dropped-tools');
      await ok.text();
      const denied = await fetch(`${fx.base}/v1/chat/completions`, {
        method: 'POST',
        headers: { origin, 'content-type': 'application/json' },
        body: '{}',
      });
      expect(denied.status).toBe(401);
      expect(denied.headers.get('access-control-allow-origin')).toBe(origin);
      const other = await fetch(`${fx.base}/v1/models`, { headers: { origin: 'https://evil.example', authorization: TEST_KEY } });
      expect(other.status).toBe(200);
      expect(other.headers.get('access-control-allow-origin')).toBeNull();
      const preflight = await fetch(`${fx.base}/v1/models`, {
        method: 'OPTIONS',
        headers: { origin: 'https://evil.example', 'access-control-request-method': 'GET' },
      });
      expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    });

    it('is off on an adapter without configured origins', async () => {
      const res = await fetch(`${fx.direct}/v1/chat/completions`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST' },
      });
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
    });
  });
});
