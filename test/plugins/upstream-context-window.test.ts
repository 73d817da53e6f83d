/**
 * A streamed request whose prompt is over the engine's context window gets a coded 400
 * (CONTEXT_LENGTH_EXCEEDED), not a broken stream (issue 30). llama.cpp's Python server
 * (llama-cpp-python 0.3) refuses such a whole request with its own 400 `context_length_exceeded`,
 * but a streamed one it answers 200 and then ends without `[DONE]`: callers got 502 STREAM_CUT_OFF.
 * With `upstream.contextTokens` the gateway counts the prompt of a stream that broke before its
 * first event with the engine's tokenizer (llama-cpp-python's `/extras/tokenize`; its `/tokenize`
 * is a 404) and names the cause. The engine here behaves as that one does (the real one is in
 * test/examples/llama-cpp-server.test.ts); judged by the openai and anthropic Node SDKs.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_KEY, startTestGateway, testConfigInput, type TestGateway } from '../support/gateway.js';
import { startScriptedEngine, type ScriptedEngine } from '../support/upstream.js';

const WINDOW = 512;
/** One token per word, as far as this engine counts. */
const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`).join(' ');

describe("upstream connector: a streamed prompt over the engine's context window", () => {
  let engine: ScriptedEngine;
  let gw: TestGateway;
  let openai: OpenAI;
  let anthropic: Anthropic;

  beforeAll(async () => {
    engine = await startScriptedEngine((req, res, body) => {
      const json = (status: number, value: unknown) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
      if (req.url === '/tokenize') return json(404, { detail: 'Not Found' });
      if (req.url === '/extras/tokenize')
        return json(200, {
          tokens: String(body.input)
            .split(/\s+/)
            .map((_, i) => i),
        });
      const tokens = body.messages
        .map((m: any) => String(typeof m.content === 'string' ? m.content : m.content.map((p: any) => p.text).join(' ')))
        .join(' ')
        .split(/\s+/).length;
      const text = String(body.messages.at(-1).content);
      if (tokens >= WINDOW || text === 'break') {
        // What llama-cpp-python does with a prompt over its window, streamed: 200, then nothing.
        if (body.stream) return res.writeHead(200, { 'content-type': 'text/event-stream' }).end();
        return json(400, {
          error: {
            message: `This model's maximum context length is ${WINDOW} tokens.`,
            type: 'invalid_request_error',
            param: 'messages',
            code: 'context_length_exceeded',
          },
        });
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(
        `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: 'short' }, finish_reason: 'stop' }] })}\n\n`,
      );
      res.end('data: [DONE]\n\n');
    });
    const upstream = { api: 'openai', baseUrl: engine.url, defaultModel: 'm' };
    gw = await startTestGateway(
      testConfigInput({
        services: [
          { id: 71, name: 'windowed', account: 'demo', public: true, family: 'openai', upstream: { ...upstream, contextTokens: WINDOW } },
          { id: 72, name: 'undeclared', account: 'demo', public: true, family: 'openai', upstream },
        ],
        plugins: { enabled: ['chatapi', 'upstream'] },
      }),
    );
    openai = new OpenAI({ apiKey: TEST_KEY, baseURL: `${gw.httpUrl}/api/adapters/chatapi`, maxRetries: 0 });
    anthropic = new Anthropic({ apiKey: TEST_KEY, baseURL: `${gw.httpUrl}/api/adapters/chatapi`, maxRetries: 0 });
  });
  afterAll(async () => {
    await gw?.close();
    await engine?.close();
  });

  const stream = (model: string, content: string) =>
    openai.chat.completions.create({ model, messages: [{ role: 'user', content }], stream: true });

  it('answers 400 CONTEXT_LENGTH_EXCEEDED before any stream, naming the count and the window', async () => {
    const err = await stream('demo/windowed', words(600)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({
      code: 'CONTEXT_LENGTH_EXCEEDED',
      type: 'invalid_request_error',
    });
    expect((err as Error).message).toContain('prompt is too long: 601 tokens');
    expect((err as Error).message).toContain(`maximum context length of service 'windowed' is ${WINDOW} tokens`);
    expect(engine.requests.at(-1)).toMatchObject({ path: '/extras/tokenize' });
  });

  it('answers the Messages translation (what Claude Code streams) the same way', async () => {
    const err = await anthropic.messages
      .stream({ model: 'demo/windowed', max_tokens: 64, messages: [{ role: 'user', content: words(700) }] })
      .finalMessage()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect((err as Error).message).toContain('prompt is too long');
  });

  it('keeps STREAM_CUT_OFF for a stream that broke with a prompt within the window, and without the setting', async () => {
    const within = await stream('demo/windowed', 'break').catch((e: unknown) => e);
    expect(within).toBeInstanceOf(OpenAI.APIError);
    expect((within as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ code: 'STREAM_CUT_OFF' });
    const undeclared = await stream('demo/undeclared', words(600)).catch((e: unknown) => e);
    expect((undeclared as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ code: 'STREAM_CUT_OFF' });
  });

  it("counts nothing for a stream that works, and relays a whole request's own engine error", async () => {
    const before = engine.requests.length;
    let text = '';
    for await (const part of await stream('demo/windowed', 'hello')) text += part.choices[0]?.delta.content ?? '';
    expect(text).toBe('short');
    expect(engine.requests.slice(before).map((r) => r.path)).toEqual(['/v1/chat/completions']);
    const whole = await openai.chat.completions
      .create({ model: 'demo/windowed', messages: [{ role: 'user', content: words(600) }] })
      .catch((e: unknown) => e);
    expect((whole as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({
      code: 'context_length_exceeded',
      param: 'messages',
    });
  });
});
