/**
 * The official OpenAI Node SDK (openai 6.x) pointed at the adapter base URL with no other change:
 * it is the judge of wire compatibility.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OTHER_ACCOUNT_KEY, READ_ONLY_KEY, TEST_KEY } from '../support/gateway.js';
import { LIMITED_KEY } from '../support/chat.js';
import { startChatFixture, type ChatFixture } from '../support/chat-fixture.js';

describe('official openai Node SDK against the standard adapter', () => {
  let fx: ChatFixture;
  let client: OpenAI;
  const failing = (apiKey = TEST_KEY) => new OpenAI({ apiKey, baseURL: fx.base, maxRetries: 0 });

  beforeAll(async () => {
    fx = await startChatFixture();
    client = new OpenAI({ apiKey: TEST_KEY, baseURL: fx.base, maxRetries: 0 });
  });
  afterAll(async () => {
    await fx?.close();
  });

  const messages: OpenAI.ChatCompletionMessageParam[] = [
    { role: 'system', content: 'You are an echo.' },
    { role: 'user', content: 'the quick brown fox' },
  ];

  it('creates a chat completion', async () => {
    const completion = await client.chat.completions.create({ model: 'demo/echo', messages, temperature: 0.2 });
    expect(completion.object).toBe('chat.completion');
    expect(completion.choices[0]!.message.content).toContain('the quick brown fox');
    expect(completion.choices[0]!.finish_reason).toBe('stop');
    expect(completion.usage?.total_tokens).toBeGreaterThan(0);
  });

  it('also works with the /v1 base URL', async () => {
    const v1 = new OpenAI({ apiKey: TEST_KEY, baseURL: `${fx.base}/v1`, maxRetries: 0 });
    const completion = await v1.chat.completions.create({ model: 'demo/echo/echo-2', messages });
    expect(completion.choices[0]!.message.content).toBe('Echo: the quick brown fox');
    expect(completion.model).toBe('echo-2');
  });

  it('streams a chat completion', async () => {
    const stream = await client.chat.completions.create({ model: 'demo/echo', messages, stream: true });
    let text = '';
    let finish: string | null = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(text).toBe('Echo: the quick brown fox');
    expect(finish).toBe('stop');
  });

  it('streams with stream_options.include_usage: a last chunk with usage and no choices', async () => {
    const stream = await client.chat.completions.create({
      model: 'demo/echo',
      messages,
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toMatchObject({ prompt_tokens: 8, completion_tokens: 5, total_tokens: 13 });
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
  });

  it('runs chat.completions.stream(...).finalChatCompletion()', async () => {
    const runner = client.chat.completions.stream({ model: 'demo/echo', messages });
    const deltas: string[] = [];
    runner.on('content', (delta) => deltas.push(delta));
    const final = await runner.finalChatCompletion();
    expect(final.choices[0]!.message).toMatchObject({ role: 'assistant', content: 'Echo: the quick brown fox' });
    expect(deltas.join('')).toBe('Echo: the quick brown fox');
  });

  describe('a tool call through the upstream connector', () => {
    const tools: OpenAI.ChatCompletionTool[] = [
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Weather in a city',
          parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        },
      },
    ];
    const ask: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];

    it('returns the tool call of a non-streamed answer', async () => {
      const before = fx.openAiUpstream.requests.length;
      const completion = await client.chat.completions.create({
        model: 'demo/openai-proxy/gpt-4o-mini',
        messages: ask,
        tools,
        tool_choice: 'auto',
      });
      const choice = completion.choices[0]!;
      expect(choice.finish_reason).toBe('tool_calls');
      expect(choice.message.tool_calls).toEqual([
        { id: 'call_weather_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
      ]);
      const upstream = fx.openAiUpstream.requests[before]!;
      expect(upstream.path).toBe('/v1/chat/completions');
      expect(upstream.headers.authorization).toBe('Bearer upstream-openai-key');
      expect(upstream.body).toMatchObject({ model: 'gpt-4o-mini', messages: ask, tools, tool_choice: 'auto' });
    });

    it('assembles a streamed tool call with finalChatCompletion()', async () => {
      const runner = client.chat.completions.stream({
        model: 'demo/openai-proxy/gpt-4o-mini',
        messages: ask,
        tools,
        stream_options: { include_usage: true },
      });
      const final = await runner.finalChatCompletion();
      const choice = final.choices[0]!;
      expect(choice.finish_reason).toBe('tool_calls');
      expect(choice.message.tool_calls?.[0]).toMatchObject({
        id: 'call_weather_1',
        type: 'function',
        function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
      });
      expect(final.usage).toMatchObject({ total_tokens: 13 });
    });
  });

  describe('errors raise the SDK class of their status, with the gateway message and request id', () => {
    const cases: [string, () => Promise<unknown>, new (...args: any[]) => Error, number, string][] = [
      [
        '401',
        () => failing('not-a-key').chat.completions.create({ model: 'demo/echo', messages }),
        OpenAI.AuthenticationError,
        401,
        'API key is not valid',
      ],
      [
        '403 permission',
        () => failing(READ_ONLY_KEY).chat.completions.create({ model: 'demo/echo', messages }),
        OpenAI.PermissionDeniedError,
        403,
        'lacks the MODEL_REQUESTS permission',
      ],
      [
        '404 private',
        () => failing(OTHER_ACCOUNT_KEY).chat.completions.create({ model: 'demo/private', messages }),
        OpenAI.NotFoundError,
        404,
        'not available to this key',
      ],
      [
        '404',
        () => failing().chat.completions.create({ model: 'demo/no-such-service', messages }),
        OpenAI.NotFoundError,
        404,
        "Model 'demo/no-such-service' does not exist",
      ],
      ['400', () => failing().chat.completions.create({ model: 'demo/echo', messages: [] }), OpenAI.BadRequestError, 400, 'messages'],
      [
        '400 registry',
        () => failing().chat.completions.create({ model: 'demo/echo/echo-1', messages, temperature: 3 }),
        OpenAI.BadRequestError,
        400,
        "Parameter 'temperature'",
      ],
      [
        '500',
        () => failing().chat.completions.create({ model: 'demo/faulty', messages: [{ role: 'user', content: 'fail-500' }] }),
        OpenAI.InternalServerError,
        500,
        'the model crashed',
      ],
      [
        '503',
        () => failing().chat.completions.create({ model: 'demo/faulty', messages: [{ role: 'user', content: 'fail-503' }], stream: true }),
        OpenAI.InternalServerError,
        503,
        'the model is overloaded',
      ],
      [
        '429 upstream',
        () =>
          failing().chat.completions.create({ model: 'demo/openai-proxy/gpt-4o', messages: [{ role: 'user', content: 'upstream-error' }] }),
        OpenAI.RateLimitError,
        429,
        'upstream quota exhausted',
      ],
    ];
    for (const [name, call, Class, status, message] of cases) {
      it(`${name} → ${Class.name}`, async () => {
        const err = await call().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(Class);
        const e = err as InstanceType<typeof OpenAI.APIError>;
        expect(e.status).toBe(status);
        expect(e.message).toContain(message);
        expect(e.requestID).toMatch(/^[0-9a-f-]{36}$/);
        expect(e.type).toBeTruthy();
      });
    }

    it('400 carries the param', async () => {
      const err = (await failing()
        .chat.completions.create({ model: 'demo/echo', messages: [{ content: 'x' } as never] })
        .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.BadRequestError>;
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      expect(err.param).toBe('messages[0].role');
      expect(err.code).toBe('VALIDATION_FAILED');
      expect(err.type).toBe('invalid_request_error');
    });

    it('429 over the account rate → RateLimitError, not retried (x-should-retry absent, maxRetries 0)', async () => {
      const limited = failing(LIMITED_KEY);
      await limited.chat.completions.create({ model: 'demo/echo', messages }).catch(() => undefined);
      const err = await limited.chat.completions.create({ model: 'demo/echo', messages }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.RateLimitError);
      expect((err as Error).message).toContain('exceeded its limit of 1 requests per second');
    });

    it('an error after the stream started is thrown by the iterator as APIError with the message', async () => {
      const stream = await failing().chat.completions.create({
        model: 'demo/faulty',
        messages: [{ role: 'user', content: 'fail-mid-stream' }],
        stream: true,
      });
      const seen: string[] = [];
      const err = await (async () => {
        for await (const chunk of stream) seen.push(chunk.choices[0]?.delta.content ?? '');
      })().catch((e: unknown) => e);
      expect(seen).toEqual(['']);
      expect(err).toBeInstanceOf(OpenAI.APIError);
      expect((err as Error).message).toContain('the model crashed mid-stream');
    });
  });

  it('lists and retrieves models, ids with slashes included', async () => {
    const ids: string[] = [];
    for await (const model of client.models.list()) ids.push(model.id);
    expect(ids).toEqual(
      expect.arrayContaining(['demo/echo', 'demo/echo/echo-1', 'demo/echo/echo-2', 'demo/private', 'demo/openai-proxy', 'demo/claude']),
    );
    const other = new OpenAI({ apiKey: OTHER_ACCOUNT_KEY, baseURL: fx.base, maxRetries: 0 });
    const visible: string[] = [];
    for await (const model of other.models.list()) visible.push(model.id);
    expect(visible).toContain('demo/echo');
    expect(visible).not.toContain('demo/private');

    const model = await client.models.retrieve('demo/echo/echo-2');
    expect(model).toMatchObject({
      id: 'demo/echo/echo-2',
      object: 'model',
      owned_by: 'demo',
      created: Date.parse('2026-02-01T00:00:00Z') / 1000,
    });
    await expect(client.models.retrieve('demo/echo/unknown')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(other.models.retrieve('demo/private')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it('creates embeddings with the default (base64 on the wire) and with float', async () => {
    const byDefault = await client.embeddings.create({ model: 'demo/echo', input: ['alpha', 'beta'] });
    const floats = await client.embeddings.create({ model: 'demo/echo', input: ['alpha', 'beta'], encoding_format: 'float' });
    expect(byDefault.data).toHaveLength(2);
    expect(byDefault.data[0]!.embedding).toHaveLength(8);
    expect(byDefault.data.map((d) => d.embedding)).toEqual(floats.data.map((d) => d.embedding));
    expect(floats.data[1]!.index).toBe(1);
    expect(byDefault.usage.total_tokens).toBe(2);
    const viaProxy = await client.embeddings.create({ model: 'demo/openai-proxy/text-embedding-3-small', input: 'x' });
    expect(viaProxy.data[0]!.embedding).toEqual([0.5, -0.25, 0]);
  });

  it('creates legacy completions, streamed and not', async () => {
    const completion = await client.completions.create({ model: 'demo/echo', prompt: 'once upon a time', max_tokens: 16 });
    expect(completion.object).toBe('text_completion');
    expect(completion.choices[0]!.text).toBe('Echo: once upon a time');
    const stream = await client.completions.create({ model: 'demo/echo', prompt: 'once upon a time', stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.text ?? '';
    expect(text).toBe('Echo: once upon a time');
  });
});
