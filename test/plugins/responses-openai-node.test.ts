/**
 * The Responses API on the standard adapter, judged by the official OpenAI Node SDK pointed at the
 * adapter base URL with no other change: create (plain, streamed, with function tools and a full tool
 * round trip), parse with a schema, previous_response_id, retrieve, input items, delete, errors.
 */
import OpenAI from 'openai';
import { zodTextFormat } from 'openai/helpers/zod';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OTHER_ACCOUNT_KEY, TEST_KEY } from '../support/gateway.js';
import { startChatFixture, type ChatFixture } from '../support/chat-fixture.js';
import { rawPost } from '../support/chat.js';

const WEATHER_TOOL: OpenAI.Responses.FunctionTool = {
  type: 'function',
  name: 'get_weather',
  description: 'Weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  strict: true,
};

describe('official openai Node SDK: the Responses API', () => {
  let fx: ChatFixture;
  let client: OpenAI;

  beforeAll(async () => {
    fx = await startChatFixture();
    client = new OpenAI({ apiKey: TEST_KEY, baseURL: fx.base, maxRetries: 0 });
  });
  afterAll(async () => {
    await fx?.close();
  });

  it('creates a response from a string input', async () => {
    const response = await client.responses.create({
      model: 'demo/echo',
      input: 'the quick brown fox',
      instructions: 'Be an echo.',
      temperature: 0.5,
    });
    expect(response.object).toBe('response');
    expect(response.id).toMatch(/^resp_/);
    expect(response.status).toBe('completed');
    expect(response.output_text).toBe('Echo: the quick brown fox');
    expect(response.output[0]).toMatchObject({ type: 'message', role: 'assistant', status: 'completed' });
    expect(response.instructions).toBe('Be an echo.');
    expect(response.temperature).toBe(0.5);
    expect(response.usage).toMatchObject({ input_tokens: 7, output_tokens: 5, total_tokens: 12 });
  });

  it('serves the /v1 base URL too, and the service gets the chat predict of the standard adapter', async () => {
    const v1 = new OpenAI({ apiKey: TEST_KEY, baseURL: `${fx.base}/v1`, maxRetries: 0 });
    const response = await v1.responses.create({
      model: 'demo/openai-proxy/gpt-up',
      instructions: 'Answer briefly.',
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'hello' },
            { type: 'input_image', image_url: 'data:image/png;base64,AAAA', detail: 'low' },
          ],
        },
      ],
      max_output_tokens: 50,
      metadata: { run: 't1' },
    });
    expect(response.output_text).toBe('Upstream heard: hello');
    const sent = fx.openAiUpstream.requests.at(-1)!.body;
    expect(sent).toMatchObject({
      model: 'gpt-up',
      max_tokens: 50,
      metadata: { run: 't1' },
      messages: [
        { role: 'system', content: 'Answer briefly.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'hello' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA', detail: 'low' } },
          ],
        },
      ],
    });
  });

  it('streams typed events in order with sequence numbers, and the stream helper gives the final response', async () => {
    const stream = await client.responses.create({ model: 'demo/echo', input: 'one two three', stream: true });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const types = events.map((e) => e.type);
    expect(types.slice(0, 4)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
    ]);
    expect(types.slice(-4)).toEqual([
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    const deltas = events.filter((e): e is OpenAI.Responses.ResponseTextDeltaEvent => e.type === 'response.output_text.delta');
    expect(deltas.map((d) => d.delta).join('')).toBe('Echo: one two three');
    const completed = events.at(-1) as OpenAI.Responses.ResponseCompletedEvent;
    expect(completed.response.usage?.total_tokens).toBeGreaterThan(0);

    const helper = client.responses.stream({ model: 'demo/echo', input: 'via the helper' });
    const final = await helper.finalResponse();
    expect(final.output_text).toBe('Echo: via the helper');
  });

  it('runs a full function-tool round trip with function_call_output', async () => {
    const model = 'demo/openai-proxy/gpt-up';
    const first = await client.responses.create({ model, input: 'Weather in Paris?', tools: [WEATHER_TOOL], tool_choice: 'auto' });
    const call = first.output.find((item): item is OpenAI.Responses.ResponseFunctionToolCall => item.type === 'function_call')!;
    expect(call).toMatchObject({ name: 'get_weather', call_id: 'call_weather_1', arguments: '{"city":"Paris"}' });
    expect(call.id).toMatch(/^fc_/);
    expect(fx.openAiUpstream.requests.at(-1)!.body.tools).toEqual([
      {
        type: 'function',
        function: { name: 'get_weather', description: 'Weather in a city', parameters: WEATHER_TOOL.parameters, strict: true },
      },
    ]);

    const second = await client.responses.create({
      model,
      tools: [WEATHER_TOOL],
      input: [
        { role: 'user', content: 'Weather in Paris?' },
        ...first.output,
        { type: 'function_call_output', call_id: call.call_id, output: '{"temp_c":21}' },
      ] as OpenAI.Responses.ResponseInput,
    });
    expect(second.output_text).toBe('The tool said: {"temp_c":21}');
    expect(fx.openAiUpstream.requests.at(-1)!.body.messages).toEqual([
      { role: 'user', content: 'Weather in Paris?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_weather_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_weather_1', content: '{"temp_c":21}' },
    ]);
  });

  it('streams a function call as its own output item with argument deltas', async () => {
    const stream = client.responses.stream({ model: 'demo/openai-proxy/gpt-up', input: 'Weather?', tools: [WEATHER_TOOL] });
    const types: string[] = [];
    stream.on('event', (e) => types.push(e.type));
    const final = await stream.finalResponse();
    expect(types).toContain('response.function_call_arguments.delta');
    expect(types).toContain('response.function_call_arguments.done');
    expect(final.output.find((i) => i.type === 'function_call')).toMatchObject({
      name: 'get_weather',
      arguments: '{"city":"Paris"}',
      status: 'completed',
    });
  });

  it('parses structured output with responses.parse and a schema (text.format json_schema)', async () => {
    const Weather = z.object({ city: z.string(), temp_c: z.number() });
    const parsed = await client.responses.parse({
      model: 'demo/openai-proxy/gpt-up',
      input: 'Weather as JSON',
      text: { format: zodTextFormat(Weather, 'weather') },
    });
    expect(parsed.output_parsed).toEqual({ city: 'Paris', temp_c: 21 });
    expect(fx.openAiUpstream.requests.at(-1)!.body.response_format).toMatchObject({
      type: 'json_schema',
      json_schema: { name: 'weather', strict: true },
    });
  });

  it('continues a conversation with previous_response_id, and stores, lists, retrieves and deletes responses', async () => {
    const model = 'demo/openai-proxy/gpt-up';
    const first = await client.responses.create({ model, input: 'first', instructions: 'not carried over' });
    const second = await client.responses.create({ model, input: 'second', previous_response_id: first.id });
    expect(second.previous_response_id).toBe(first.id);
    expect(fx.openAiUpstream.requests.at(-1)!.body.messages).toEqual([
      { role: 'user', content: 'first' },
      { role: 'assistant', content: 'Upstream heard: first' },
      { role: 'user', content: 'second' },
    ]);

    const again = await client.responses.retrieve(first.id);
    expect(again).toMatchObject({ id: first.id, status: 'completed', output_text: 'Upstream heard: first' });
    const items = [];
    for await (const item of client.responses.inputItems.list(second.id)) items.push(item);
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'second' }] });

    // Another account cannot see it: 404, as for an unknown id.
    const other = new OpenAI({ apiKey: OTHER_ACCOUNT_KEY, baseURL: fx.base, maxRetries: 0 });
    await expect(other.responses.retrieve(first.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(other.responses.delete(first.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);

    await client.responses.delete(first.id);
    await expect(client.responses.retrieve(first.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const err = await client.responses.create({ model, input: 'x', previous_response_id: first.id }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect((err as InstanceType<typeof OpenAI.NotFoundError>).param).toBe('previous_response_id');
  });

  it('keeps nothing with store: false', async () => {
    const response = await client.responses.create({ model: 'demo/echo', input: 'forget me', store: false });
    await expect(client.responses.retrieve(response.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it('validates the config against the registry like chat, naming the Responses field', async () => {
    const tooHot = await client.responses.create({ model: 'demo/echo', input: 'x', temperature: 5 }).catch((e: unknown) => e);
    expect(tooHot).toBeInstanceOf(OpenAI.BadRequestError);
    expect((tooHot as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('temperature');
    const tooLong = await client.responses.create({ model: 'demo/echo', input: 'x', max_output_tokens: 100_000 }).catch((e: unknown) => e);
    expect(tooLong).toBeInstanceOf(OpenAI.BadRequestError);
    expect((tooLong as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('max_output_tokens');
    expect((tooLong as Error).message).toContain("'max_output_tokens'");
  });

  it('ends a stream that fails mid-way with error and response.failed, never response.completed', async () => {
    const res = await rawPost(
      `${fx.base}/v1/responses`,
      { model: 'demo/faulty', input: 'fail-mid-stream', stream: true },
      { authorization: `Bearer ${TEST_KEY}` },
    );
    expect(res.status).toBe(200);
    const names = [...res.text.matchAll(/^event: (.+)$/gm)].map((m) => m[1]);
    expect(names.slice(-2)).toEqual(['error', 'response.failed']);
    expect(names).not.toContain('response.completed');
    const stream = await client.responses.create({ model: 'demo/faulty', input: 'fail-mid-stream', stream: true });
    await expect(
      (async () => {
        for await (const _ of stream) {
          /* drain */
        }
      })(),
    ).rejects.toThrow(/crashed mid-stream/);
  });
});
