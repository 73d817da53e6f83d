/**
 * The Anthropic Messages API on both adapters, judged by the official Anthropic TypeScript SDK with
 * only its base URL and key changed: create with string content, streams and the stream helpers, a
 * tool_use/tool_result round trip, count_tokens, headers, and each error status raising the SDK's
 * matching exception class with Anthropic's error type.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OTHER_ACCOUNT_KEY, READ_ONLY_KEY, TEST_KEY } from '../support/gateway.js';
import { LIMITED_KEY, rawPost } from '../support/chat.js';
import { startChatFixture, type ChatFixture } from '../support/chat-fixture.js';

const WEATHER: Anthropic.Tool = {
  name: 'get_weather',
  description: 'Weather in a city',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

describe('official Anthropic TypeScript SDK: the Messages API', () => {
  let fx: ChatFixture;
  let client: Anthropic;
  let direct: Anthropic;
  const withKey = (apiKey: string) => new Anthropic({ apiKey, baseURL: fx.base, maxRetries: 0 });

  beforeAll(async () => {
    fx = await startChatFixture();
    client = withKey(TEST_KEY);
    direct = new Anthropic({ apiKey: TEST_KEY, baseURL: fx.direct, maxRetries: 0 });
  });
  afterAll(async () => {
    await fx?.close();
  });

  describe('standard adapter, translated to chat', () => {
    it('creates a message from string content, with a request-id', async () => {
      const message = await client.messages.create({
        model: 'demo/echo',
        max_tokens: 100,
        system: 'Be an echo.',
        messages: [{ role: 'user', content: 'the quick brown fox' }],
      });
      expect(message.type).toBe('message');
      expect(message.content).toEqual([{ type: 'text', text: 'Echo: the quick brown fox' }]);
      expect(message.stop_reason).toBe('end_turn');
      expect(message.model).toBe('demo/echo');
      expect(message.usage).toMatchObject({ input_tokens: 7, output_tokens: 5 });
      expect(message._request_id).toBeTruthy();
    });

    it('streams named events in order; the stream helper gives the final message and text', async () => {
      const raw = await client.messages.create({
        model: 'demo/echo',
        max_tokens: 50,
        messages: [{ role: 'user', content: 'one two' }],
        stream: true,
      });
      const types: string[] = [];
      let text = '';
      for await (const event of raw) {
        types.push(event.type);
        if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') text += event.delta.text;
      }
      expect(types[0]).toBe('message_start');
      expect(types.slice(-3)).toEqual(['content_block_stop', 'message_delta', 'message_stop']);
      expect(text).toBe('Echo: one two');

      const stream = client.messages.stream({
        model: 'demo/echo',
        max_tokens: 50,
        messages: [{ role: 'user', content: 'via the helper' }],
      });
      const deltas: string[] = [];
      stream.on('text', (delta) => deltas.push(delta));
      const final = await stream.finalMessage();
      expect(deltas.join('')).toBe('Echo: via the helper');
      expect(final.content).toEqual([{ type: 'text', text: 'Echo: via the helper' }]);
      expect(final.stop_reason).toBe('end_turn');
      expect(final.usage.output_tokens).toBe(4);
    });

    it('runs a tool_use / tool_result round trip, streamed and not', async () => {
      const model = 'demo/openai-proxy/gpt-up';
      const ask: Anthropic.MessageParam = { role: 'user', content: 'Weather in Paris?' };
      const first = await client.messages.create({
        model,
        max_tokens: 100,
        tools: [WEATHER],
        tool_choice: { type: 'auto' },
        messages: [ask],
      });
      expect(first.stop_reason).toBe('tool_use');
      const use = first.content.find((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use')!;
      expect(use).toMatchObject({ id: 'call_weather_1', name: 'get_weather', input: { city: 'Paris' } });
      expect(fx.openAiUpstream.requests.at(-1)!.body).toMatchObject({
        tools: [{ type: 'function', function: { name: 'get_weather', parameters: WEATHER.input_schema } }],
        tool_choice: 'auto',
        max_tokens: 100,
      });

      const streamed = await client.messages.stream({ model, max_tokens: 100, tools: [WEATHER], messages: [ask] }).finalMessage();
      expect(streamed.content.find((b) => b.type === 'tool_use')).toMatchObject({ name: 'get_weather', input: { city: 'Paris' } });

      const second = await client.messages.create({
        model,
        max_tokens: 100,
        tools: [WEATHER],
        messages: [
          ask,
          { role: 'assistant', content: first.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: '21 C' }] },
        ],
      });
      expect(second.content).toEqual([{ type: 'text', text: 'The tool said: 21 C' }]);
      expect(fx.openAiUpstream.requests.at(-1)!.body.messages.slice(1)).toEqual([
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_weather_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
        },
        { role: 'tool', tool_call_id: 'call_weather_1', content: '21 C' },
      ]);
    });

    it('counts tokens with the service, and says when it is an estimate', async () => {
      const { data: counted, response } = await client.messages
        .countTokens({ model: 'demo/echo', system: 'one two', messages: [{ role: 'user', content: 'three four five' }] })
        .withResponse();
      expect(counted).toEqual({ input_tokens: 5 });
      expect(response.headers.get('x-gateway-token-count')).toBe('service');
      // A service that cannot count (the test engine has no /tokenize): an estimate, said so.
      const estimated = await client.messages
        .countTokens({ model: 'demo/openai-proxy/gpt-up', messages: [{ role: 'user', content: 'x' }] })
        .withResponse();
      expect(estimated.response.headers.get('x-gateway-token-count')).toBe('estimate');
      expect(estimated.data.input_tokens).toBeGreaterThan(0);
    });

    it("gives Anthropic-family services the Messages body itself, string content as text blocks, with the caller's anthropic-beta", async () => {
      const beta = new Anthropic({
        apiKey: TEST_KEY,
        baseURL: fx.base,
        maxRetries: 0,
        defaultHeaders: { 'anthropic-beta': 'tools-2024-04-04' },
      });
      const message = await beta.messages.create({
        model: 'demo/claude/claude-up',
        max_tokens: 20,
        messages: [{ role: 'user', content: 'hello claude' }],
      });
      expect(message.content).toEqual([{ type: 'text', text: 'Claude heard: hello claude' }]);
      const upstream = fx.anthropicUpstream.requests.at(-1)!;
      expect(upstream.body).toEqual({
        model: 'claude-up',
        max_tokens: 20,
        messages: [{ role: 'user', content: [{ type: 'text', text: 'hello claude' }] }],
      });
      expect(upstream.headers['anthropic-beta']).toBe('tools-2024-04-04');
      const counted = await client.messages.countTokens({
        model: 'demo/claude/claude-up',
        messages: [{ role: 'user', content: 'count me' }],
      });
      expect(counted.input_tokens).toBe(JSON.stringify([{ role: 'user', content: [{ type: 'text', text: 'count me' }] }]).length);
    });

    it('accepts the key as Authorization: Bearer (authToken) as well as x-api-key', async () => {
      const bearer = new Anthropic({ authToken: TEST_KEY, apiKey: null, baseURL: fx.base, maxRetries: 0 });
      const message = await bearer.messages.create({ model: 'demo/echo', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
      expect(message.content[0]).toEqual({ type: 'text', text: 'Echo: hi' });
    });

    it('raises the SDK class of each status, with Anthropic error types', async () => {
      const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'hi' }];
      const cases: [string, () => Promise<unknown>, new (...args: any[]) => Error, number, string][] = [
        [
          '401',
          () => withKey('nope').messages.create({ model: 'demo/echo', max_tokens: 5, messages }),
          Anthropic.AuthenticationError,
          401,
          'authentication_error',
        ],
        [
          '403',
          () => withKey(READ_ONLY_KEY).messages.create({ model: 'demo/echo', max_tokens: 5, messages }),
          Anthropic.PermissionDeniedError,
          403,
          'permission_error',
        ],
        [
          '404 unknown',
          () => client.messages.create({ model: 'demo/nothing', max_tokens: 5, messages }),
          Anthropic.NotFoundError,
          404,
          'not_found_error',
        ],
        [
          '404 private',
          () => withKey(OTHER_ACCOUNT_KEY).messages.create({ model: 'demo/private', max_tokens: 5, messages }),
          Anthropic.NotFoundError,
          404,
          'not_found_error',
        ],
        // temperature, which this SDK version's types no longer list, out of the registry's range.
        [
          '400',
          () =>
            client.messages.create({
              model: 'demo/echo',
              max_tokens: 5,
              messages,
              temperature: 9,
            } as Anthropic.MessageCreateParamsNonStreaming),
          Anthropic.BadRequestError,
          400,
          'invalid_request_error',
        ],
        [
          '400 upstream',
          () => client.messages.create({ model: 'demo/claude/c', max_tokens: 5, messages: [{ role: 'user', content: 'bad-param' }] }),
          Anthropic.BadRequestError,
          400,
          'invalid_request_error',
        ],
        [
          '429 upstream',
          () => client.messages.create({ model: 'demo/claude/c', max_tokens: 5, messages: [{ role: 'user', content: 'rate-limited' }] }),
          Anthropic.RateLimitError,
          429,
          'rate_limit_error',
        ],
        [
          '500 upstream',
          () => client.messages.create({ model: 'demo/claude/c', max_tokens: 5, messages: [{ role: 'user', content: 'server-error' }] }),
          Anthropic.InternalServerError,
          500,
          'api_error',
        ],
        [
          '529 upstream',
          () => client.messages.create({ model: 'demo/claude/c', max_tokens: 5, messages: [{ role: 'user', content: 'upstream-error' }] }),
          Anthropic.InternalServerError,
          529,
          'overloaded_error',
        ],
        [
          '503 no instance',
          () => client.messages.create({ model: 'demo/private', max_tokens: 5, messages }),
          Anthropic.InternalServerError,
          503,
          'api_error',
        ],
      ];
      for (const [name, run, cls, status, type] of cases) {
        const err = await run().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err, name).toBeInstanceOf(cls);
        const apiError = err as InstanceType<typeof Anthropic.APIError>;
        expect(apiError.status, name).toBe(status);
        expect(apiError.type, name).toBe(type);
        expect(apiError.requestID, name).toBeTruthy();
      }
    });

    it('relays an upstream 429 exactly: message, retry-after and rate-limit headers, upstream request id', async () => {
      const err = (await client.messages
        .create({ model: 'demo/claude/c', max_tokens: 5, messages: [{ role: 'user', content: 'rate-limited' }] })
        .catch((e: unknown) => e)) as InstanceType<typeof Anthropic.RateLimitError>;
      expect(err.error).toMatchObject({
        type: 'error',
        error: { type: 'rate_limit_error', message: 'Number of requests has exceeded your rate limit.' },
      });
      expect(err.headers.get('retry-after')).toBe('9');
      expect(err.headers.get('anthropic-ratelimit-requests-remaining')).toBe('0');
      expect(err.headers.get('x-upstream-request-id')).toBe('req_anthropic_429');
    });

    it('ends a cut-off upstream stream with an error event: the SDK throws instead of returning a short answer', async () => {
      const stream = client.messages.stream({ model: 'demo/claude/c', max_tokens: 5, messages: [{ role: 'user', content: 'cut-off' }] });
      await expect(stream.finalMessage()).rejects.toThrow(/before its terminal event \(message_stop\)/);
    });
  });

  describe('direct adapter, byte for byte', () => {
    const blocks = (text: string): Anthropic.MessageParam[] => [{ role: 'user', content: [{ type: 'text', text }] }];

    it('passes the body to an Anthropic-family service and its answer back', async () => {
      const message = await direct.messages.create({ model: 'demo/claude/claude-up', max_tokens: 20, messages: blocks('hello direct') });
      expect(message).toMatchObject({
        id: 'msg_upstream_1',
        content: [{ type: 'text', text: 'Claude heard: hello direct' }],
        stop_reason: 'end_turn',
      });
      const final = await direct.messages
        .stream({ model: 'demo/claude/claude-up', max_tokens: 20, messages: blocks('streamed') })
        .finalMessage();
      expect(final.content).toEqual([{ type: 'text', text: 'Claude heard: streamed' }]);
      const counted = await direct.messages.countTokens({ model: 'demo/claude/claude-up', messages: blocks('n') });
      expect(counted.input_tokens).toBe(JSON.stringify(blocks('n')).length);
    });

    it('applies the spec rules of the family: string content reaches the service as typed parts, a non-part is a 400 naming the field', async () => {
      const answer = await direct.messages.create({
        model: 'demo/claude/c',
        max_tokens: 20,
        messages: [{ role: 'user', content: 'a string' }],
      });
      expect(answer.content).toEqual([{ type: 'text', text: 'Claude heard: a string' }]);
      expect(fx.anthropicUpstream.requests.at(-1)!.body.messages).toEqual([
        { role: 'user', content: [{ type: 'text', text: 'a string' }] },
      ]);
      const err = await direct.messages
        .create({ model: 'demo/claude/c', max_tokens: 20, messages: [{ role: 'user', content: [{ text: 'no type' }] as never }] })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Anthropic.BadRequestError);
      expect((err as Error).message).toContain('messages[0].content');
      const notAnthropic = await direct.messages
        .create({ model: 'demo/echo', max_tokens: 20, messages: blocks('x') })
        .catch((e: unknown) => e);
      expect(notAnthropic).toBeInstanceOf(Anthropic.BadRequestError);
    });
  });

  it('answers 429 with Retry-After when the account is over its rate, and 503 with Retry-After when no instance is connected', async () => {
    const body = { model: 'demo/echo', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] };
    let limited;
    for (let i = 0; i < 5 && limited?.status !== 429; i++)
      limited = await rawPost(`${fx.base}/v1/messages`, body, { 'x-api-key': LIMITED_KEY });
    expect(limited!.status).toBe(429);
    expect(limited!.headers['retry-after']).toBe('1');
    expect(JSON.parse(limited!.text)).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
    const none = await rawPost(`${fx.base}/v1/messages`, { ...body, model: 'demo/private' }, { 'x-api-key': TEST_KEY });
    expect(none.status).toBe(503);
    expect(none.headers['retry-after']).toBe('1');
  });
});
