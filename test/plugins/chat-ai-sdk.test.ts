/**
 * The Vercel AI SDK against the adapters, with only base URL and key set: its default OpenAI provider
 * (`openai('<model>')`, which speaks the Responses API), its `.chat()` provider, and
 * `@ai-sdk/anthropic` (the Messages API); generateText, streamText and a multi-step tool call.
 */
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_KEY } from '../support/gateway.js';
import { startChatFixture, type ChatFixture } from '../support/chat-fixture.js';

describe('Vercel AI SDK against the adapters', () => {
  let fx: ChatFixture;
  beforeAll(async () => {
    fx = await startChatFixture();
  });
  afterAll(async () => {
    await fx?.close();
  });

  const openai = () => createOpenAI({ baseURL: fx.base, apiKey: TEST_KEY });
  const anthropic = () => createAnthropic({ baseURL: `${fx.base}/v1`, apiKey: TEST_KEY });

  it('generateText and streamText with the default OpenAI provider (Responses API)', async () => {
    const result = await generateText({ model: openai()('demo/echo'), prompt: 'hello there', maxRetries: 0 });
    expect(result.text).toBe('Echo: hello there');
    expect(result.finishReason).toBe('stop');
    expect(result.usage.inputTokens).toBe(2);
    expect(result.usage.outputTokens).toBe(3);

    const stream = streamText({ model: openai()('demo/echo'), prompt: 'streamed words', maxRetries: 0 });
    let text = '';
    for await (const delta of stream.textStream) text += delta;
    expect(text).toBe('Echo: streamed words');
    expect(await stream.finishReason).toBe('stop');
  });

  it('runs a tool call to its answer over several steps (Responses API)', async () => {
    const calls: unknown[] = [];
    const result = await generateText({
      model: openai()('demo/openai-proxy/gpt-up'),
      prompt: 'Weather in Paris?',
      tools: {
        get_weather: tool({
          description: 'Weather in a city',
          inputSchema: jsonSchema<{ city: string }>({
            type: 'object',
            properties: { city: { type: 'string' } },
            required: ['city'],
            additionalProperties: false,
          }),
          execute: async (input) => {
            calls.push(input);
            return '21 C';
          },
        }),
      },
      stopWhen: stepCountIs(3),
      maxRetries: 0,
    });
    expect(calls).toEqual([{ city: 'Paris' }]);
    expect(result.text).toBe('The tool said: 21 C');
  });

  it('generateText and streamText with the chat provider', async () => {
    const result = await generateText({ model: openai().chat('demo/echo'), prompt: 'chat route', maxRetries: 0 });
    expect(result.text).toBe('Echo: chat route');
  });

  it('generateText and streamText with @ai-sdk/anthropic (Messages API)', async () => {
    const result = await generateText({ model: anthropic()('demo/echo'), prompt: 'hello claude', maxRetries: 0 });
    expect(result.text).toBe('Echo: hello claude');
    expect(result.finishReason).toBe('stop');
    const stream = streamText({ model: anthropic()('demo/claude/claude-up'), prompt: 'streamed', maxRetries: 0 });
    let text = '';
    for await (const delta of stream.textStream) text += delta;
    expect(text).toBe('Claude heard: streamed');
  });
});
