/**
 * What agents' traffic needs besides translation, through a real gateway and the official SDKs:
 * count_tokens through the engine's `/tokenize` (llama.cpp's form), else an estimate said so in a
 * header; agent-sized bodies (several MB) under the default limits, a coded 413 beyond them; and an
 * agent's session id keeping its whole session on one instance (the engine's prefix cache stays warm).
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, testConfigInput, TEST_KEY, type TestGateway } from '../support/gateway.js';
import { startRawModel, type RawModel } from '../support/raw-model.js';
import { startAgentEngine, type AgentEngine } from '../support/agent-engine.js';

const STICKY_TOKEN = 'sticky-service-token-0001';
const completion = (who: string) => ({
  id: 'c',
  object: 'chat.completion',
  created: 1,
  model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content: who }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
});

describe('agent sessions: token counts, body sizes, affinity', () => {
  let engine: AgentEngine;
  let gw: TestGateway;
  let instances: RawModel[];
  let anthropic: Anthropic;

  beforeAll(async () => {
    engine = await startAgentEngine('/nonexistent');
    process.env.AGENT_SESSIONS_ENGINE_KEY = 'k';
    gw = await startTestGateway(
      testConfigInput({
        services: [
          {
            id: 30,
            name: 'llama',
            account: 'demo',
            public: true,
            family: 'openai',
            upstream: { api: 'openai', baseUrl: `${engine.url}/v1`, apiKeyEnv: 'AGENT_SESSIONS_ENGINE_KEY', defaultModel: 'm' },
          },
          // An engine with no /tokenize (its root has none).
          {
            id: 32,
            name: 'no-tokenizer',
            account: 'demo',
            public: true,
            family: 'openai',
            upstream: { api: 'openai', baseUrl: `${engine.url}/elsewhere/v1`, apiKeyEnv: 'AGENT_SESSIONS_ENGINE_KEY', defaultModel: 'm' },
          },
          {
            id: 31,
            name: 'sticky',
            account: 'demo',
            public: true,
            family: 'openai',
            affinity: { messages: 1 },
            connectionTokens: [{ token: STICKY_TOKEN }],
          },
        ],
        // The default heartbeat: the multi-MB bodies below hold the event loop longer than the test default allows.
        gate: { heartbeatIntervalMs: 5000, defaultTimeoutSec: 10 },
        plugins: { enabled: ['chatapi', 'upstream'], options: { chatapi: { aliasPrefix: '/v1' } } },
      }),
    );
    instances = [
      await startRawModel(gw.grpcAddress, STICKY_TOKEN, () => completion('instance A')),
      await startRawModel(gw.grpcAddress, STICKY_TOKEN, () => completion('instance B')),
    ];
    anthropic = new Anthropic({ apiKey: TEST_KEY, baseURL: gw.httpUrl, maxRetries: 0 });
  });
  afterAll(async () => {
    for (const instance of instances ?? []) instance.close();
    await gw?.close();
    await engine?.close();
  });

  it("counts tokens with the engine's /tokenize, falling back from the chat form to llama.cpp's content", async () => {
    const { data, response } = await anthropic.messages
      .countTokens({ model: 'demo/llama', system: 'one two', messages: [{ role: 'user', content: 'three four five' }] })
      .withResponse();
    // "system\none two\nuser\nthree four five": 7 words, a token each for this engine.
    expect(data).toEqual({ input_tokens: 7 });
    expect(response.headers.get('x-gateway-token-count')).toBe('service');
    const tried = engine.requests.filter((r) => r.path === '/tokenize').map((r) => Object.keys(r.body).sort().join(','));
    expect(tried.slice(-2)).toEqual(['add_generation_prompt,messages,model', 'add_special,content']);
  });

  it('estimates for a service that cannot count, and says so', async () => {
    const { data, response } = await anthropic.messages
      .countTokens({ model: 'demo/no-tokenizer', messages: [{ role: 'user', content: 'x'.repeat(400) }] })
      .withResponse();
    expect(response.headers.get('x-gateway-token-count')).toBe('estimate');
    expect(data.input_tokens).toBeGreaterThanOrEqual(100);
  });

  it("keeps an agent's session on one instance by its session id, whatever its messages", async () => {
    const answers = new Set<string>();
    for (let i = 0; i < 8; i++) {
      const message = await anthropic.messages.create(
        { model: 'demo/sticky', max_tokens: 8, messages: [{ role: 'user', content: `turn ${i}` }] },
        { headers: { 'x-claude-code-session-id': 'session-1' } },
      );
      answers.add((message.content[0] as Anthropic.TextBlock).text);
    }
    expect(answers.size).toBe(1);
    // Codex: prompt_cache_key on the Responses API, the same rule.
    const openai = new OpenAI({ apiKey: TEST_KEY, baseURL: `${gw.httpUrl}/v1`, maxRetries: 0 });
    const codex = new Set<string>();
    for (let i = 0; i < 8; i++)
      codex.add(
        (await openai.responses.create({ model: 'demo/sticky', input: `turn ${i}`, prompt_cache_key: 'codex-session', store: false }))
          .output_text,
      );
    expect(codex.size).toBe(1);
  });

  it('takes an agent-sized body (6 MB of history and 60 tools) under the default limits, and answers a coded 413 beyond them', async () => {
    const tools = Array.from({ length: 60 }, (_, i) => ({
      name: `tool_${i}`,
      description: 'd'.repeat(2000),
      input_schema: { type: 'object' as const, properties: { a: { type: 'string' } } },
    }));
    const history = Array.from({ length: 200 }, (_, i) => ({
      role: (i % 2 ? 'assistant' : 'user') as 'user' | 'assistant',
      content: `${i} ${'x'.repeat(30_000)}`,
    }));
    const message = await anthropic.messages.create({
      model: 'demo/llama',
      max_tokens: 16,
      tools,
      messages: [...history, { role: 'user', content: 'done?' }],
    });
    expect(message.content[0]).toMatchObject({ type: 'text', text: 'ok' });
    expect(JSON.stringify(engine.requests.at(-1)!.body).length).toBeGreaterThan(6_000_000);

    const huge = [{ role: 'user' as const, content: 'y'.repeat(33 * 1024 * 1024) }];
    const err = await anthropic.messages.create({ model: 'demo/llama', max_tokens: 16, messages: huge }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect((err as InstanceType<typeof Anthropic.APIError>).status).toBe(413);
    expect((err as InstanceType<typeof Anthropic.APIError>).type).toBe('request_too_large');
  }, 60_000);

  it('pools per-token embeddings (llama.cpp without pooling) into one vector, never NaN through the SDK', async () => {
    const openai = new OpenAI({ apiKey: TEST_KEY, baseURL: `${gw.httpUrl}/v1`, maxRetries: 0 });
    // The Node SDK asks for base64 and decodes float32s; floats asked for come as they are.
    const base64 = await openai.embeddings.create({ model: 'demo/llama', input: ['a b', 'c'] });
    expect(base64.data.map((d) => d.embedding)).toEqual([
      [2, 3, -2],
      [2, 3, -2],
    ]);
    const floats = await openai.embeddings.create({ model: 'demo/llama', input: 'a b', encoding_format: 'float' });
    expect(floats.data[0]!.embedding).toEqual([2, 3, -2]);
  });
});
