/**
 * Reasoning effort to a chat engine (issue 30): Responses `reasoning.effort`, Messages
 * `output_config.effort` and `thinking.budget_tokens` reach the engine as Chat's `reasoning_effort`,
 * except where the service's registry model lists `reasoning_effort` without that value (then the
 * request goes without it, not a 400: the caller never wrote that field). Before, all three were
 * dropped. Real gateway, a scripted chat engine behind the upstream connector, the official openai
 * and Anthropic SDKs.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_KEY, startTestGateway, testConfigInput, type TestGateway } from '../support/gateway.js';
import { startUpstream, type Upstream } from '../support/upstream.js';

describe('reasoning effort to a chat engine', () => {
  let engine: Upstream;
  let gw: TestGateway;
  let openai: OpenAI;
  let anthropic: Anthropic;

  beforeAll(async () => {
    engine = await startUpstream(({ body }, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'chatcmpl-1',
          object: 'chat.completion',
          created: 1,
          model: body.model,
          choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
        }),
      );
    });
    const upstream = { api: 'openai', baseUrl: `${engine.url}/v1`, defaultModel: 'engine-model' };
    const input = testConfigInput({
      services: [
        { id: 44, name: 'thinker', account: 'demo', public: true, family: 'openai', upstream },
        // A registry model that takes three efforts only.
        { id: 45, name: 'strict', account: 'demo', public: true, family: 'openai', provider: 'demo', defaultModel: 'plain-1', upstream },
      ],
      registry: {
        providers: [{ name: 'demo', displayName: 'Demo' }],
        models: [
          {
            name: 'plain-1',
            providers: ['demo'],
            createdAt: '2026-01-01T00:00:00Z',
            parameters: {
              constants: [],
              variables: [
                { type: 'number', name: 'temperature', min: 0, max: 2 },
                { type: 'integer', name: 'max_tokens', min: 1, max: 4096 },
                { type: 'enum', name: 'reasoning_effort', values: ['low', 'medium', 'high'] },
              ],
            },
          },
        ],
      },
      plugins: { enabled: ['chatapi', 'upstream'] },
    });
    gw = await startTestGateway(input);
    openai = new OpenAI({ apiKey: TEST_KEY, baseURL: `${gw.httpUrl}/api/adapters/chatapi/v1`, maxRetries: 0 });
    anthropic = new Anthropic({ apiKey: TEST_KEY, baseURL: `${gw.httpUrl}/api/adapters/chatapi`, maxRetries: 0 });
  });
  afterAll(async () => {
    await gw?.close();
    await engine?.close();
  });

  const sent = () => engine.requests.at(-1)!.body;

  it("Responses reasoning.effort is the engine request's reasoning_effort", async () => {
    for (const effort of ['minimal', 'low', 'high'] as const) {
      await openai.responses.create({ model: 'demo/thinker', input: 'think', reasoning: { effort }, store: false });
      expect(sent().reasoning_effort).toBe(effort);
    }
    await openai.responses.create({ model: 'demo/thinker', input: 'think', store: false });
    expect(sent()).not.toHaveProperty('reasoning_effort');
  });

  it('Messages output_config.effort, else the band of thinking.budget_tokens', async () => {
    const ask = (extra: Record<string, unknown>) =>
      anthropic.messages.create({
        model: 'demo/thinker',
        max_tokens: 64,
        messages: [{ role: 'user', content: 'think' }],
        ...extra,
      } as Anthropic.MessageCreateParamsNonStreaming);
    await ask({ thinking: { type: 'enabled', budget_tokens: 1024 } });
    expect(sent().reasoning_effort).toBe('low');
    await ask({ thinking: { type: 'enabled', budget_tokens: 8000 } });
    expect(sent().reasoning_effort).toBe('medium');
    // Claude Code's default budget.
    await ask({ thinking: { type: 'enabled', budget_tokens: 31999 } });
    expect(sent().reasoning_effort).toBe('high');
    await ask({ thinking: { type: 'enabled', budget_tokens: 31999 }, output_config: { effort: 'low' } });
    expect(sent().reasoning_effort).toBe('low');
    await ask({ output_config: { effort: 'max' } });
    expect(sent().reasoning_effort).toBe('high');
    await ask({ thinking: { type: 'disabled' } });
    expect(sent()).not.toHaveProperty('reasoning_effort');
  });

  it('is left out where the registry model does not take the value, and the request still succeeds', async () => {
    const response = await openai.responses.create({
      model: 'demo/strict',
      input: 'think',
      reasoning: { effort: 'minimal' },
      temperature: 0.5,
      store: false,
    });
    expect(response.output_text).toBe('ok');
    expect(sent()).toMatchObject({ temperature: 0.5 });
    expect(sent()).not.toHaveProperty('reasoning_effort');
    await openai.responses.create({ model: 'demo/strict', input: 'think', reasoning: { effort: 'high' }, store: false });
    expect(sent().reasoning_effort).toBe('high');
    await anthropic.messages.create({
      model: 'demo/strict',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'think' }],
      thinking: { type: 'enabled', budget_tokens: 2048 },
    });
    expect(sent().reasoning_effort).toBe('low');
    await anthropic.messages.create({
      model: 'demo/strict',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'think' }],
      output_config: { effort: 'max' },
    } as Anthropic.MessageCreateParamsNonStreaming);
    expect(sent().reasoning_effort).toBe('high');
  });
});
