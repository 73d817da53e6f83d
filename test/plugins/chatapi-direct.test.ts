import OpenAI from 'openai';
import { pino } from 'pino';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_KEY } from '../support/gateway.js';
import { rawPost, sseData } from '../support/chat.js';
import { startChatFixture, type ChatFixture } from '../support/chat-fixture.js';

const auth = { Authorization: TEST_KEY };

/** Named-event SSE frames `event: <name>\ndata: <json>\n\n`; throws on any other shape. */
function namedEvents(text: string): { event: string; data: any }[] {
  expect(text.endsWith('\n\n')).toBe(true);
  return text
    .split('\n\n')
    .slice(0, -1)
    .map((block) => {
      const match = /^event: ([a-z_]+)\ndata: (.+)$/.exec(block);
      if (!match) throw new Error(`not a named event: ${JSON.stringify(block)}`);
      return { event: match[1]!, data: JSON.parse(match[2]!) };
    });
}

describe('direct chat adapter', () => {
  let fx: ChatFixture;
  let url: string;
  const logLines: any[] = [];

  beforeAll(async () => {
    const sink = new Writable({
      write(chunk, _enc, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) logLines.push(JSON.parse(line));
        done();
      },
    });
    fx = await startChatFixture({ 'chatapi-direct': { logUsage: true } }, { logger: pino({ level: 'info' }, sink) });
    url = `${fx.direct}/chat/completions`;
  });
  afterAll(async () => {
    await fx?.close();
  });

  it('passes the body to a service byte for byte, typed JsonObject for services outside the OpenAI family', async () => {
    const text =
      '{ "model": "demo/plain/some-model",\n  "messages": [{"role": "user", "content": "hi"}],\n  "custom_field": {"kept": [1, 2.50]} }';
    const before = fx.plain.requests.length;
    const res = await rawPost(url, text, auth);
    expect(res.status).toBe(200);
    const got = fx.plain.requests[before]!;
    expect(got.dataText).toBe(text);
    expect(got.dataType).toBe(`${fx.gw.httpUrl}/specs/common.json#/JsonObject`);
    expect(got.configType).toBeUndefined();
    expect(got.config).toBeUndefined();
    expect(JSON.parse(res.text)).toEqual({ got: JSON.parse(text), dataType: got.dataType });
  });

  it('types the body ChatCompletionDirectProxy for the general chat-model proxy and returns its answer unchanged', async () => {
    const before = fx.openAiUpstream.requests.length;
    const body = {
      model: 'demo/openai-proxy/gpt-4o',
      messages: [{ role: 'user', content: 'direct hello' }],
      temperature: 0.1,
      logit_bias: { '50256': -100 },
    };
    const res = await rawPost(url, body, { Authorization: `Bearer ${TEST_KEY}` });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text)).toMatchObject({
      id: 'chatcmpl-upstream-1',
      object: 'chat.completion',
      model: 'gpt-4o',
      system_fingerprint: 'fp_up',
      choices: [{ message: { content: 'Upstream heard: direct hello' } }],
    });
    expect(fx.openAiUpstream.requests[before]!.body).toEqual({ ...body, model: 'gpt-4o' });
  });

  it('works with the official OpenAI SDK pointed at the direct base, tool calls streamed and not', async () => {
    const client = new OpenAI({ apiKey: TEST_KEY, baseURL: `${fx.direct}/v1`, maxRetries: 0 });
    const tools: OpenAI.ChatCompletionTool[] = [
      { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
    ];
    const ask: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];
    const plain = await client.chat.completions.create({ model: 'demo/openai-proxy/gpt-4o', messages: ask, tools });
    expect(plain.choices[0]!.message.tool_calls?.[0]).toMatchObject({
      id: 'call_weather_1',
      function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
    });
    const final = await client.chat.completions.stream({ model: 'demo/openai-proxy/gpt-4o', messages: ask, tools }).finalChatCompletion();
    expect(final.choices[0]!.message.tool_calls?.[0]).toMatchObject({ id: 'call_weather_1', function: { arguments: '{"city":"Paris"}' } });
    let text = '';
    for await (const chunk of await client.chat.completions.create({
      model: 'demo/openai-proxy/gpt-4o',
      messages: [{ role: 'user', content: 'stream me' }],
      stream: true,
    })) {
      text += chunk.choices[0]?.delta.content ?? '';
    }
    expect(text).toBe('Upstream heard: stream me');
  });

  it('streams an OpenAI-family service as data-only events ending with [DONE]', async () => {
    const res = await rawPost(
      url,
      {
        model: 'demo/openai-proxy/gpt-4o',
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: 'raw stream' }],
      },
      auth,
    );
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    const events = sseData(res.text);
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('Upstream heard: raw stream');
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { total_tokens: 13 } });
  });

  describe('Anthropic family', () => {
    const anthropicBody = (extra: Record<string, unknown> = {}) => ({
      model: 'demo/claude/claude-3-5-sonnet-20240620',
      max_tokens: 256,
      system: 'Be brief.',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'hello claude' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
          ],
        },
      ],
      ...extra,
    });

    it('passes a Messages body through and returns the Message unchanged', async () => {
      const before = fx.anthropicUpstream.requests.length;
      const res = await rawPost(url, anthropicBody(), { 'x-api-key': TEST_KEY, 'anthropic-version': '2023-06-01' });
      expect(res.status).toBe(200);
      expect(JSON.parse(res.text)).toEqual({
        id: 'msg_upstream_1',
        type: 'message',
        role: 'assistant',
        model: 'claude-3-5-sonnet-20240620',
        content: [{ type: 'text', text: 'Claude heard: hello claude' }],
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: 7, output_tokens: 5 },
      });
      const upstream = fx.anthropicUpstream.requests[before]!;
      expect(upstream.path).toBe('/v1/messages');
      expect(upstream.headers['x-api-key']).toBe('upstream-anthropic-key');
      expect(upstream.headers['anthropic-version']).toBe('2023-06-01');
      expect(upstream.body).toEqual({ ...anthropicBody(), model: 'claude-3-5-sonnet-20240620' });
    });

    it('refuses a missing max_tokens with 400 naming it, before any dispatch', async () => {
      const before = fx.anthropicUpstream.requests.length;
      const { max_tokens: _, ...body } = anthropicBody();
      const res = await rawPost(url, body, auth);
      expect(res.status).toBe(400);
      expect(JSON.parse(res.text).error).toMatchObject({ code: 'VALIDATION_FAILED', type: 'invalid_request_error', param: 'max_tokens' });
      expect(JSON.parse(res.text).error.message).toContain('max_tokens is required');
      expect(fx.anthropicUpstream.requests.length).toBe(before);
    });

    it('sends a string content on as one text block, and refuses content that is neither with 400 naming the message, before any dispatch', async () => {
      const adapted = await rawPost(
        url,
        anthropicBody({
          messages: [
            { role: 'user', content: [{ type: 'text', text: 'ok' }] },
            { role: 'assistant', content: 'a string' },
          ],
        }),
        auth,
      );
      expect(adapted.status).toBe(200);
      expect(fx.anthropicUpstream.requests.at(-1)!.body.messages[1]).toEqual({
        role: 'assistant',
        content: [{ type: 'text', text: 'a string' }],
      });
      const before = fx.anthropicUpstream.requests.length;
      const res = await rawPost(
        url,
        anthropicBody({
          messages: [
            { role: 'user', content: [{ type: 'text', text: 'ok' }] },
            { role: 'assistant', content: 42 },
          ],
        }),
        auth,
      );
      expect(res.status).toBe(400);
      const error = JSON.parse(res.text).error;
      expect(error).toMatchObject({ code: 'VALIDATION_FAILED', param: 'messages[1].content' });
      expect(error.message).toContain('array of typed parts');
      expect(fx.anthropicUpstream.requests.length).toBe(before);
      // The same body is fine for an OpenAI-family service.
      const openai = await rawPost(url, { model: 'demo/openai-proxy/gpt-4o', messages: [{ role: 'user', content: 'a string' }] }, auth);
      expect(openai.status).toBe(200);
    });

    it('streams named event: frames in Anthropic order, with no [DONE]', async () => {
      const res = await rawPost(url, anthropicBody({ stream: true }), auth);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
      const events = namedEvents(res.text);
      expect(events.map((e) => e.event)).toEqual([
        'message_start',
        'content_block_start',
        'ping',
        'content_block_delta',
        'content_block_delta',
        'content_block_stop',
        'message_delta',
        'message_stop',
      ]);
      expect(events.every((e) => e.data.type === e.event)).toBe(true);
      expect(
        events
          .filter((e) => e.event === 'content_block_delta')
          .map((e) => e.data.delta.text)
          .join(''),
      ).toBe('Claude heard: hello claude');
      expect(res.text).not.toContain('[DONE]');
    });

    it('ends a stream with event: error when the upstream fails mid-stream', async () => {
      const res = await rawPost(
        url,
        anthropicBody({ stream: true, messages: [{ role: 'user', content: [{ type: 'text', text: 'stream-error' }] }] }),
        auth,
      );
      expect(res.status).toBe(200);
      const events = namedEvents(res.text);
      const last = events.at(-1)!;
      expect(last.event).toBe('error');
      // Anthropic's own error event: the upstream's type and message, exactly.
      expect(last.data).toEqual({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded mid-stream' } });
    });

    it('answers an upstream error before the stream with its status as JSON', async () => {
      const res = await rawPost(
        url,
        anthropicBody({ stream: true, messages: [{ role: 'user', content: [{ type: 'text', text: 'upstream-error' }] }] }),
        auth,
      );
      expect(res.status).toBe(529);
      expect(JSON.parse(res.text).error).toMatchObject({ code: 'upstream.overloaded_error', message: 'Overloaded' });
    });
  });

  it('answers an upstream error no retry can fix with x-should-retry: false', async () => {
    const res = await rawPost(url, { model: 'demo/openai-proxy/gpt-4o', messages: [{ role: 'user', content: 'upstream-error' }] }, auth);
    expect(res.status).toBe(429);
    expect(res.headers['x-should-retry']).toBe('false');
    // Relayed exactly: the upstream's message, type and code.
    expect(JSON.parse(res.text).error).toMatchObject({
      code: 'insufficient_quota',
      type: 'insufficient_quota',
      message: 'upstream quota exhausted',
      param: null,
      args: { retryable: 'false' },
    });
    const retryable = await rawPost(
      url,
      { model: 'demo/claude/c', max_tokens: 5, messages: [{ role: 'user', content: [{ type: 'text', text: 'upstream-error' }] }] },
      auth,
    );
    expect(retryable.status).toBe(529);
    expect(retryable.headers['x-should-retry']).toBeUndefined();
  });

  it('checks the key, the model id and the body like the standard adapter', async () => {
    expect((await rawPost(url, { model: 'demo/plain', messages: [] }, {})).status).toBe(401);
    expect((await rawPost(url, { model: 'demo/nope', messages: [] }, auth)).status).toBe(404);
    const noModel = await rawPost(url, { messages: [] }, auth);
    expect(noModel.status).toBe(400);
    expect(JSON.parse(noModel.text).error.param).toBe('model');
    expect((await rawPost(url, '{"model": ', auth)).status).toBe(400);
  });

  it('logs the usage of answers (logUsage on), Anthropic stream usage merged over its events; the access line has the model and tokens', async () => {
    logLines.length = 0;
    await rawPost(
      url,
      {
        model: 'demo/claude/claude-x',
        max_tokens: 5,
        stream: true,
        messages: [{ role: 'user', content: [{ type: 'text', text: 'count me' }] }],
      },
      auth,
    );
    await rawPost(url, { model: 'demo/openai-proxy/gpt-4o', messages: [{ role: 'user', content: 'count me' }] }, auth);
    const usage = logLines.filter((l) => l.msg === 'usage');
    expect(usage.map((l) => [l.model, l.usage, l.account, l.key])).toEqual([
      ['demo/claude/claude-x', { input_tokens: 7, output_tokens: 5 }, 'demo', 'all'],
      ['demo/openai-proxy/gpt-4o', { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 }, 'demo', 'all'],
    ]);
    const access = logLines.filter((l) => l.msg === 'request');
    expect(access.map((l) => [l.model, l.inputTokens, l.outputTokens])).toEqual([
      ['demo/claude/claude-x', 7, 5],
      ['demo/openai-proxy/gpt-4o', 9, 4],
    ]);
  });
});
