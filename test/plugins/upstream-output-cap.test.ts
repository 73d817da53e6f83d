/**
 * `upstream.maxOutputTokens` (issue 30): the gateway caps the output tokens it asks an engine for, on
 * every way a request reaches it (chat completions, legacy completions, the Responses and Messages
 * translations, a Responses engine, an Anthropic engine), streamed and whole. Coding agents ask for
 * 32k tokens (Claude Code's `max_tokens: 32000`); a small self-hosted engine would generate until its
 * window is full. A caller asking for fewer keeps theirs. (Whole Messages calls ask for 20k: the
 * SDK refuses a non-streamed call whose limit could take over 10 minutes.) Real gateway, real engines on loopback
 * recording what they received, judged by the official openai and anthropic Node SDKs.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_KEY, startTestGateway, testConfigInput, type TestGateway } from '../support/gateway.js';
import { startAnthropicUpstream, startOpenAiUpstream, startUpstream, type Upstream } from '../support/upstream.js';

const CAP = 64;

/** A Responses engine: a whole answer, or a two-event stream ending in `response.completed`. */
function startResponsesEngine(): Promise<Upstream> {
  return startUpstream(({ body }, res) => {
    const answer = {
      id: 'resp_1',
      object: 'response',
      created_at: 1,
      status: 'completed',
      model: body.model,
      output: [
        {
          type: 'message',
          id: 'msg_1',
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: 'ok', annotations: [] }],
        },
      ],
      usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 },
    };
    if (!body.stream) {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify(answer));
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(
      `event: response.created\ndata: ${JSON.stringify({ type: 'response.created', sequence_number: 0, response: { ...answer, status: 'in_progress', output: [] } })}\n\n`,
    );
    res.end(`event: response.completed\ndata: ${JSON.stringify({ type: 'response.completed', sequence_number: 1, response: answer })}\n\n`);
  });
}

describe('upstream connector: upstream.maxOutputTokens caps what the engine is asked for', () => {
  let chatEngine: Upstream;
  let messagesEngine: Upstream;
  let responsesEngine: Upstream;
  let gw: TestGateway;
  let openai: OpenAI;
  let anthropic: Anthropic;

  beforeAll(async () => {
    [chatEngine, messagesEngine, responsesEngine] = await Promise.all([
      startOpenAiUpstream(),
      startAnthropicUpstream(),
      startResponsesEngine(),
    ]);
    gw = await startTestGateway(
      testConfigInput({
        services: [
          {
            id: 61,
            name: 'capped',
            account: 'demo',
            public: true,
            family: 'openai',
            upstream: { api: 'openai', baseUrl: `${chatEngine.url}/v1`, defaultModel: 'm', maxOutputTokens: CAP },
          },
          {
            id: 62,
            name: 'uncapped',
            account: 'demo',
            public: true,
            family: 'openai',
            upstream: { api: 'openai', baseUrl: `${chatEngine.url}/v1`, defaultModel: 'm' },
          },
          {
            id: 63,
            name: 'claude',
            account: 'demo',
            public: true,
            family: 'anthropic',
            upstream: { api: 'anthropic', baseUrl: messagesEngine.url, defaultModel: 'claude-x', maxOutputTokens: CAP },
          },
          {
            id: 64,
            name: 'native',
            account: 'demo',
            public: true,
            family: 'openai',
            nativeResponses: true,
            upstream: { api: 'openai', baseUrl: `${responsesEngine.url}/v1`, defaultModel: 'r', maxOutputTokens: CAP },
          },
        ],
        plugins: { enabled: ['chatapi', 'upstream'] },
      }),
    );
    openai = new OpenAI({ apiKey: TEST_KEY, baseURL: `${gw.httpUrl}/api/adapters/chatapi`, maxRetries: 0 });
    anthropic = new Anthropic({ apiKey: TEST_KEY, baseURL: `${gw.httpUrl}/api/adapters/chatapi`, maxRetries: 0 });
  });
  afterAll(async () => {
    await gw?.close();
    await Promise.all([chatEngine?.close(), messagesEngine?.close(), responsesEngine?.close()]);
  });

  const lastChatBody = () => chatEngine.requests.at(-1)!.body;
  const hi: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'hi' }];

  it('caps a chat completion that asks for more, streamed and whole, and sets max_tokens on one that names no limit', async () => {
    await openai.chat.completions.create({ model: 'demo/capped', messages: hi, max_tokens: 32_000 });
    expect(lastChatBody().max_tokens).toBe(CAP);
    const stream = await openai.chat.completions.create({ model: 'demo/capped', messages: hi, max_tokens: 32_000, stream: true });
    for await (const _ of stream);
    expect(lastChatBody()).toMatchObject({ stream: true, max_tokens: CAP });
    await openai.chat.completions.create({ model: 'demo/capped', messages: hi });
    expect(lastChatBody().max_tokens).toBe(CAP);
    expect(lastChatBody()).not.toHaveProperty('max_completion_tokens');
  });

  it('caps max_completion_tokens in the field the caller used, and keeps a smaller limit', async () => {
    await openai.chat.completions.create({ model: 'demo/capped', messages: hi, max_completion_tokens: 10_000 });
    expect(lastChatBody().max_completion_tokens).toBe(CAP);
    expect(lastChatBody()).not.toHaveProperty('max_tokens');
    await openai.chat.completions.create({ model: 'demo/capped', messages: hi, max_tokens: 12 });
    expect(lastChatBody().max_tokens).toBe(12);
  });

  it('caps legacy completions and leaves embeddings alone', async () => {
    await openai.completions.create({ model: 'demo/capped', prompt: 'once', max_tokens: 4096 });
    expect(lastChatBody().max_tokens).toBe(CAP);
    await openai.embeddings.create({ model: 'demo/capped', input: 'a' });
    expect(chatEngine.requests.at(-1)!.path).toBe('/v1/embeddings');
    expect(lastChatBody()).not.toHaveProperty('max_tokens');
  });

  it('caps the Messages and Responses translations to a chat engine (what Claude Code and Codex send), streamed and whole', async () => {
    await anthropic.messages.create({ model: 'demo/capped', max_tokens: 20_000, messages: [{ role: 'user', content: 'hi' }] });
    expect(lastChatBody().max_tokens).toBe(CAP);
    const messages = await anthropic.messages
      .stream({ model: 'demo/capped', max_tokens: 32_000, messages: [{ role: 'user', content: 'hi' }] })
      .finalMessage();
    expect(messages.type).toBe('message');
    expect(lastChatBody()).toMatchObject({ stream: true, max_tokens: CAP });
    await openai.responses.create({ model: 'demo/capped', input: 'hi', store: false });
    expect(lastChatBody().max_tokens).toBe(CAP);
    const stream = await openai.responses.create({
      model: 'demo/capped',
      input: 'hi',
      max_output_tokens: 100_000,
      store: false,
      stream: true,
    });
    for await (const _ of stream);
    expect(lastChatBody()).toMatchObject({ stream: true, max_tokens: CAP });
  });

  it('caps max_tokens to an Anthropic engine and max_output_tokens to a Responses engine', async () => {
    await anthropic.messages.create({ model: 'demo/claude', max_tokens: 20_000, messages: [{ role: 'user', content: 'hi' }] });
    expect(messagesEngine.requests.at(-1)!.body.max_tokens).toBe(CAP);
    await anthropic.messages.create({ model: 'demo/claude', max_tokens: 7, messages: [{ role: 'user', content: 'hi' }] });
    expect(messagesEngine.requests.at(-1)!.body.max_tokens).toBe(7);
    await openai.responses.create({ model: 'demo/native', input: 'hi', store: false });
    expect(responsesEngine.requests.at(-1)!.body.max_output_tokens).toBe(CAP);
    const stream = await openai.responses.create({
      model: 'demo/native',
      input: 'hi',
      max_output_tokens: 50_000,
      store: false,
      stream: true,
    });
    for await (const _ of stream);
    expect(responsesEngine.requests.at(-1)!.body).toMatchObject({ stream: true, max_output_tokens: CAP });
  });

  it("sends the caller's limit as it is to a service without the setting", async () => {
    await openai.chat.completions.create({ model: 'demo/uncapped', messages: hi, max_tokens: 32_000 });
    expect(lastChatBody().max_tokens).toBe(32_000);
    await openai.chat.completions.create({ model: 'demo/uncapped', messages: hi });
    expect(lastChatBody()).not.toHaveProperty('max_tokens');
  });
});
